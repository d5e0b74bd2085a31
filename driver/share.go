package driver

import (
	"context"
	"fmt"

	"github.com/heliac/heliac/emit"
	"github.com/heliac/heliac/plan"
	"github.com/heliac/heliac/verify"
)

// Model is one model of a set: its bytes and how to compile it.
type Model struct {
	Data   []byte
	Config Config
}

// SetOutput is a set of models compiled for one firmware that runs one at
// a time: each model's Output, whose scratch arenas are shared
// (plan.Share), and the shared module that defines the buffers and binds
// them to every model (emit.SharedC; nil when nothing is shared).
type SetOutput struct {
	Outputs []*Output
	Shared  emit.Files
}

// CompileSet compiles several models for one firmware: each is planned on
// its own, then their scratch arenas of one name become one buffer sized
// to the largest (their persistent and constant arenas stay their own),
// and each is emitted and verified. Models' C prefixes must differ, and
// none may be emit.SharedName. An error names the model it is about.
func CompileSet(ctx context.Context, models []Model) (*SetOutput, error) {
	if len(models) == 0 {
		return nil, fmt.Errorf("driver: a set of no models")
	}
	states := make([]*planned, len(models))
	plans := make([]*plan.Plan, len(models))
	prefixes := map[string]string{}
	for i, mdl := range models {
		prefix := emit.Prefix(mdl.Config.Prefix, mdl.Config.ModelName)
		switch other, dup := prefixes[prefix]; {
		case dup:
			return nil, fmt.Errorf("models %s and %s would both be named %s in C; rename one", other, mdl.Config.ModelName, prefix)
		case prefix == emit.SharedName:
			return nil, fmt.Errorf("model %s: %s names the set's shared module; rename the model", mdl.Config.ModelName, prefix)
		}
		prefixes[prefix] = mdl.Config.ModelName
		if mdl.Config.Patches == PatchesAuto {
			return nil, fmt.Errorf("%s: --patches %s compiles one model at a time, not a set", mdl.Config.ModelName, PatchesAuto)
		}
		if err := checkPatches(mdl.Config); err != nil {
			return nil, fmt.Errorf("%s: %w", mdl.Config.ModelName, err)
		}
		s, err := planModel(ctx, mdl.Data, mdl.Config)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", mdl.Config.ModelName, err)
		}
		states[i], plans[i] = s, s.p
	}
	shared, err := plan.Share(plans)
	if err != nil {
		return nil, err
	}
	out := &SetOutput{}
	var sm []emit.SharedModel
	for i, s := range states {
		s.p = shared[i]
		if len(states) > 1 {
			// The set's buffers are sized to these plans: finish keeps
			// them (no TFLM placement for a larger tensor_arena).
			s.theirs = nil
		}
		o, err := s.finish()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", s.cfg.ModelName, err)
		}
		out.Outputs = append(out.Outputs, o)
		sm = append(sm, emit.SharedModel{Prefix: o.Prefix(), Plan: o.Plan})
	}
	if len(models) > 1 {
		if out.Shared, err = emit.SharedC(sm, models[0].Config.Version); err != nil {
			return nil, err
		}
		// The shared module is read back against the plans, as heliac
		// verify DIR reads it.
		set := make([]verify.SetPlan, len(out.Outputs))
		for i, o := range out.Outputs {
			set[i] = verify.SetPlan{Prefix: o.Prefix(), JSON: o.PlanJSON}
		}
		var h, c []byte
		if len(out.Shared) == 2 {
			h, c = out.Shared[0].Data, out.Shared[1].Data
		}
		if v := verify.Shared(set, h, c); len(v) > 0 {
			return nil, fmt.Errorf("%s.c: %w", emit.SharedName, &VerifyError{Violations: v})
		}
	}
	return out, nil
}
