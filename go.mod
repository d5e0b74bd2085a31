module github.com/heliac/heliac

go 1.26.8

require (
	github.com/google/flatbuffers v25.12.19+incompatible
	github.com/spf13/cobra v1.10.2
	github.com/spf13/pflag v1.0.9
	github.com/stretchr/testify v1.12.1
	go.yaml.in/yaml/v3 v3.0.5
)

require github.com/inconshreveable/mousetrap v1.1.0 // indirect
