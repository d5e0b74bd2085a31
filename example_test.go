package heliac_test

import (
	"context"
	"fmt"
	"os"

	"github.com/heliac/heliac"
)

// Compile a model for Ambiq's Apollo510 and list its arenas and the files
// a firmware build takes.
func ExampleCompile() {
	model, err := os.ReadFile("testdata/models/hello_world_int8.tflite")
	if err != nil {
		fmt.Println(err)
		return
	}
	out, err := heliac.Compile(context.Background(), model, heliac.Options{Name: "hello_world_int8", Platform: "apollo510"})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, a := range out.Plan.Arenas {
		fmt.Printf("%-20s %-10s %5d B\n", a.Name, a.Role, a.Size)
	}
	for _, f := range out.Files() {
		fmt.Println(f.Name)
	}
	// Output:
	// constant_mram        constant     432 B
	// scratch_dtcm         scratch       32 B
	// hello_world_int8.h
	// hello_world_int8.c
	// hello_world_int8.plan.json
}
