// Package schema holds the Go bindings that flatc generates from the TFLite
// flatbuffer schema (schema.fbs, revision 3d): accessors and builder
// functions per table, and the object API (flatc --gen-object-api), a
// struct per table (ModelT, TensorT, ...) with UnPack and Pack. The
// *_generated.go files are produced by generate.sh (make schema) and never
// edited by hand.
//
// Only package tflite imports this package: the generated accessors and
// UnPack trust their input, so tflite checks every offset before it calls
// them.
package schema

//go:generate ./generate.sh
