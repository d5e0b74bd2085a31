// Command heliac plans the memory of a TFLite model ahead of time and
// writes the plan as JSON and as C sources for microcontroller firmware.
//
//	heliac model.tflite -o out/
//	heliac inspect model.tflite [--json]
package main

import "os"

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }
