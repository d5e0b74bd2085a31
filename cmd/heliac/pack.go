package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/heliac/heliac/emit"
	"github.com/heliac/heliac/internal/inputfile"
	"github.com/heliac/heliac/plan"
	"github.com/heliac/heliac/plan/dsa"
)

type packOptions struct {
	input     string
	output    string
	capacity  int64
	timeLimit time.Duration
	strategy  string
	stdout    io.Writer
}

func newPackCmd(runF func(*packOptions) error, stdout io.Writer) *cobra.Command {
	opts := &packOptions{stdout: stdout}
	cmd := &cobra.Command{
		Use:   "pack PROBLEM.csv",
		Short: "Run the offset allocator alone on a MiniMalloc-format CSV",
		Long: `pack reads buffers in MiniMalloc's CSV format (id,lower,upper,size with
half-open [lower, upper), optional alignment and offset columns), places them,
and prints one line: height=… lower_bound=… buffers=… seconds=… optimal=…
(optimal=true: the height is proven the least possible). --time-limit is
the search budget of --strategy best: when it runs out, the best placement
found by then (at worst tflm's) is used; the other strategies do not search.
With -o it writes the rows back with an offset column.`,
		Args: argCount(1, 1, "pack: expected one CSV file, got %d argument(s)"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.input = args[0]
			if _, err := lookupStrategy("pack: unknown strategy", opts.strategy); err != nil {
				return err
			}
			if opts.capacity < 0 {
				return &usageError{fmt.Errorf("pack: --capacity must be 0 (unbounded) or more, got %d", opts.capacity)}
			}
			if err := checkTimeLimit(opts.timeLimit); err != nil {
				return &usageError{fmt.Errorf("pack: %w", err)}
			}
			if runF != nil {
				return runF(opts)
			}
			return runPack(cmd.Context(), opts)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&opts.output, "out", "o", "", "write the buffers with their offsets to this CSV file")
	f.Int64Var(&opts.capacity, "capacity", 0, "arena capacity in bytes (0: unbounded)")
	durationFlag(f, &opts.timeLimit, "time-limit", plan.DefaultTimeLimit, "search budget of --strategy best; the best placement found by then is used")
	f.StringVar(&opts.strategy, "strategy", plan.PlannerBest, "allocator: "+strategyHelp())
	return cmd
}

func runPack(ctx context.Context, opts *packOptions) error {
	if ctx == nil {
		ctx = context.Background()
	}
	strategy, err := lookupStrategy("pack: unknown strategy", opts.strategy)
	if err != nil {
		return err
	}
	data, err := inputfile.Read(opts.input, inputfile.CSV)
	if err != nil {
		return err
	}
	p, ids, err := dsa.ReadCSV(bytes.NewReader(data))
	if err != nil {
		return fmt.Errorf("pack %s: %w", opts.input, err)
	}
	p.Capacity = opts.capacity
	if err := writePacked(opts, p, ids, nil); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, opts.timeLimit)
	defer cancel()
	start := time.Now()
	sol, err := strategy.Run(ctx, p)
	secs := time.Since(start).Seconds()
	if err != nil {
		if errors.Is(err, dsa.ErrInfeasible) {
			return &noFitError{fmt.Errorf("pack %s: %w", opts.input, err)}
		}
		return fmt.Errorf("pack %s: %w", opts.input, err)
	}
	if err := writePacked(opts, p, ids, &sol); err != nil {
		return err
	}
	fmt.Fprintf(opts.stdout, "height=%d lower_bound=%d buffers=%d seconds=%.3f optimal=%t\n",
		sol.Height, dsa.LowerBound(p), len(p.Buffers), secs, sol.Optimal)
	return nil
}

// writePacked writes p's buffers with sol's offsets to -o, as writeSet writes
// a set of one file, when -o is given. A nil sol only checks that -o does not
// name the input, before the search.
func writePacked(opts *packOptions, p dsa.Problem, ids []string, sol *dsa.Solution) error {
	if opts.output == "" {
		return nil
	}
	dir, files := filepath.Dir(opts.output), emit.Files{{Name: filepath.Base(opts.output)}}
	if err := refuseInput(opts.input, "CSV file", dir, files, "choose another -o"); err != nil {
		return fmt.Errorf("pack %s: %w", opts.input, err)
	}
	if sol == nil {
		return nil
	}
	var csv bytes.Buffer
	if err := dsa.WriteCSV(&csv, p, ids, *sol); err != nil {
		return fmt.Errorf("pack %s: %w", opts.output, err)
	}
	files[0].Data = csv.Bytes()
	if err := writeSet(dir, files, nil, opts.input); err != nil {
		return fmt.Errorf("pack %s: %w", opts.input, err)
	}
	return nil
}
