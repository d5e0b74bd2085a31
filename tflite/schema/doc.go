// Package schema holds the Go bindings that flatc generates from the TFLite
// flatbuffer schema (schema.fbs, revision 3d). The *_generated.go files are
// produced by generate.sh (make schema) and never edited by hand.
//
// Only package tflite imports this package: the generated accessors trust
// their input, so tflite checks every offset before it calls them.
package schema

//go:generate ./generate.sh
