package driver

import (
	"context"
	"errors"
	"fmt"

	"github.com/heliac/heliac/plan"
	"github.com/heliac/heliac/stripe"
	"github.com/heliac/heliac/tflite"
)

// FitError is a model that does not fit the platform's banks (Err, the
// planner's *plan.CapacityError), with what --patches auto found: Hint
// says whether stripes make it fit ("" when the model offers none).
type FitError struct {
	Err  *plan.CapacityError
	Hint string
}

func (e *FitError) Error() string {
	if e.Hint == "" {
		return e.Err.Error()
	}
	return e.Err.Error() + "\n  " + e.Hint
}

func (e *FitError) Unwrap() error { return e.Err }

// fitFirst is Compile for a model that does not fit the platform (ce):
// with --patches auto it looks for stripes that lower the scratch arena
// until the model fits, and compiles the rewrite; without, it says
// whether --patches auto would make it fit. Either way, a model that
// still does not fit fails with a *FitError naming the bank.
func fitFirst(ctx context.Context, data []byte, cfg Config, ce *plan.CapacityError) (*Output, error) {
	// Stripes lower the scratch arena only: a bank too small for the
	// constants (Step -1) stays so.
	if ce.Step < 0 || cfg.Plan.Platform == nil {
		return nil, ce
	}
	m, err := tflite.Load(data)
	if err != nil || len(stripe.Candidates(m)) == 0 {
		return nil, ce
	}
	// The model planned with every writable bank unlimited, then striped
	// as --patches auto would; the rewrite is then planned on the
	// platform as it is.
	lifted := cfg
	pf := *cfg.Plan.Platform
	pf.Banks = append([]plan.Bank(nil), pf.Banks...)
	for i := range pf.Banks {
		if pf.Banks[i].Writable {
			pf.Banks[i].Capacity = 0
		}
	}
	lifted.Plan.Platform = &pf
	lifted.Patches = PatchesAuto
	s, err := planModel(ctx, data, lifted)
	if err != nil {
		return nil, ce
	}
	r, info, err := s.choosePatches(ctx)
	if err != nil || r == nil {
		why := "--patches auto finds no stripes that lower the scratch arena"
		if info != nil && info.Reason != "" {
			why = "--patches auto keeps the model as given: " + info.Reason
		}
		return nil, &FitError{Err: ce, Hint: why}
	}
	// The rewrite in the order the choice planned it (the order search
	// may interleave the stripes otherwise), placed on the platform.
	fcfg := cfg
	fcfg.Liveness.Order, fcfg.Liveness.Ordering = r.lt.Schedule.Order, r.lt.Schedule.Ordering
	fcfg.Liveness.ExactOverlap = r.cfg.Liveness.ExactOverlap
	fits, err := planLoaded(ctx, r.m, fcfg)
	var still *plan.CapacityError
	if errors.As(err, &still) {
		return nil, &FitError{Err: ce, Hint: fmt.Sprintf("even run stripe by stripe by --patches auto (%d region(s), %+.2f%% MACs) it needs %d B in bank %q, which has %d",
			len(info.Regions), info.ExtraPercent(), still.Need, still.Bank, still.Have)}
	}
	if err != nil {
		return nil, ce
	}
	if cfg.Patches != PatchesAuto {
		return nil, &FitError{Err: ce, Hint: fmt.Sprintf("it fits with --patches auto: %d region(s) run stripe by stripe, heliac's arena %d -> %d B, %+.2f%% MACs (%+d operator(s))",
			len(info.Regions), info.HeadBefore, info.HeadAfter, info.ExtraPercent(), info.ExtraOps)}
	}
	fits.data, fits.original, fits.originalData = nil, m, data
	if fits.data, err = tflite.Encode(fits.m, tflite.EncodeOptions{}); err != nil {
		return nil, fmt.Errorf("--patches auto: encode the rewritten model: %w", err)
	}
	fits.againstTFLM(ctx)
	out, err := fits.finish()
	if err != nil {
		return nil, err
	}
	info.HeadAfter, _ = head(fits.p)
	info.Fit = fmt.Sprintf("the model as given does not fit: %s needs %d B in bank %q, which has %d; run stripe by stripe it fits", "its scratch", ce.Need, ce.Bank, ce.Have)
	out.setPatches(info, cfg)
	return out, nil
}
