package main

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/heliac/heliac/emit"
	"github.com/heliac/heliac/internal/inputfile"
	"github.com/heliac/heliac/tflite"
)

type inspectOptions struct {
	model  string
	json   bool
	stdout io.Writer
}

func newInspectCmd(runF func(*inspectOptions) error, stdout io.Writer) *cobra.Command {
	opts := &inspectOptions{stdout: stdout}
	cmd := &cobra.Command{
		Use:   "inspect MODEL.tflite",
		Short: "Print a model's subgraphs, tensors and operators",
		Args:  argCount(1, 1, "inspect: expected one model file, got %d argument(s)"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.model = args[0]
			if runF != nil {
				return runF(opts)
			}
			return runInspect(opts)
		},
	}
	cmd.Flags().BoolVar(&opts.json, "json", false, "print JSON instead of tables")
	return cmd
}

func runInspect(opts *inspectOptions) error {
	data, err := inputfile.Read(opts.model, inputfile.Model)
	if err != nil {
		return err
	}
	m, err := tflite.Load(data)
	if err != nil {
		return fmt.Errorf("inspect %s: %w", opts.model, err)
	}
	if !opts.json {
		_, err = opts.stdout.Write(emit.Inspect(m))
		return err
	}
	js, err := emit.InspectJSON(m)
	if err != nil {
		return err
	}
	_, err = opts.stdout.Write(js)
	return err
}
