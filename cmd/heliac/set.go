package main

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/heliac/heliac/driver"
	"github.com/heliac/heliac/emit"
	"github.com/heliac/heliac/internal/inputfile"
	"github.com/heliac/heliac/liveness"
	"github.com/heliac/heliac/plan"
)

// runCompileSet compiles several models for one firmware that runs one at
// a time (driver.CompileSet): each model's set goes to -o as it would
// alone, then the shared module (emit.SharedC).
func runCompileSet(ctx context.Context, opts *compileOptions) error {
	cfg, err := compileConfig(opts)
	if err != nil {
		return err
	}
	models := make([]driver.Model, len(opts.models))
	for i, path := range opts.models {
		data, err := inputfile.Read(path, inputfile.Model)
		if err != nil {
			return err
		}
		c := cfg
		c.ModelName = emit.ModelName(path)
		models[i] = driver.Model{Data: data, Config: c}
	}
	set, err := driver.CompileSet(ctx, models)
	if err != nil {
		return fmt.Errorf("compile: %w", err)
	}
	if len(set.Shared) > 0 {
		// Before any model's files, so that a refused run writes nothing.
		if err := driver.CheckReplaceShared(opts.outDir, set.Shared, opts.force); err != nil {
			return err
		}
	}
	for i, out := range set.Outputs {
		one := *opts
		one.model = opts.models[i]
		if err := writeOutput(&one, models[i].Config.ModelName, out.Files()); err != nil {
			return fmt.Errorf("compile %s: %w", one.model, err)
		}
	}
	if len(set.Shared) > 0 {
		if err := refuseInput(opts.model, "model", opts.outDir, set.Shared, "choose another -o"); err != nil {
			return err
		}
		if err := writeSet(opts.outDir, set.Shared, nil, opts.model); err != nil {
			return err
		}
	}
	if opts.quiet {
		return nil
	}
	for i, out := range set.Outputs {
		one := *opts
		one.model = opts.models[i]
		if opts.json {
			if err := printJSONSummary(&one, out, out.Files()); err != nil {
				return err
			}
			continue
		}
		printSummary(&one, out, out.Files())
	}
	if !opts.json {
		printShared(opts, set)
	}
	return nil
}

// printShared says what the models share: per shared arena, the buffer
// and what the models would need apart.
func printShared(opts *compileOptions, set *driver.SetOutput) {
	type use struct {
		size, apart int64
		memory      string
	}
	uses := map[string]*use{}
	var names []string
	for _, out := range set.Outputs {
		for _, a := range out.Plan.Arenas {
			if a.Provider != plan.Shared || a.Role != liveness.Scratch {
				continue
			}
			u := uses[a.Name]
			if u == nil {
				u = &use{memory: a.Memory}
				uses[a.Name] = u
				names = append(names, a.Name)
			}
			u.size, u.apart = a.SharedSize, u.apart+a.Size
		}
	}
	for _, n := range names {
		u := uses[n]
		fmt.Fprintf(opts.stdout, "shared: %s in %s is one buffer of %d B for %d model(s), instead of %d B apart\n",
			n, u.memory, u.size, len(set.Outputs), u.apart)
	}
	if len(set.Shared) > 0 {
		fmt.Fprintf(opts.stdout, "wrote %s, %s: call %s_bind() once before the models' init\n",
			filepath.Join(opts.outDir, set.Shared[0].Name), filepath.Join(opts.outDir, set.Shared[1].Name), emit.SharedName)
	}
}
