package driver_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/heliac/heliac/driver"
	"github.com/heliac/heliac/emit"
	"github.com/heliac/heliac/internal/corpus"
	"github.com/heliac/heliac/internal/randmodel"
	"github.com/heliac/heliac/liveness"
	"github.com/heliac/heliac/plan"
)

// compileOrFull compiles data with cfg and fails the test on any error but
// a *plan.CapacityError: the model does not fit the platform. Compile
// verifies every plan it returns, so a success is a verified plan. It
// reports whether the model fitted.
func compileOrFull(t *testing.T, data []byte, cfg driver.Config, what string) (*driver.Output, bool) {
	t.Helper()
	out, err := driver.Compile(context.Background(), data, cfg)
	var ce *plan.CapacityError
	switch {
	case err == nil:
		return out, true
	case errors.As(err, &ce):
		return nil, false
	}
	var ve *driver.VerifyError
	if errors.As(err, &ve) {
		t.Errorf("%s: plan fails verification: %v", what, err)
	} else {
		t.Errorf("%s: %v", what, err)
	}
	return nil, false
}

// TestCompileBuiltinPlatforms compiles every bundled and corpus model for
// every built-in platform. Each either fits, and its plan verifies, or
// does not, and the planner says so with a *plan.CapacityError.
func TestCompileBuiltinPlatforms(t *testing.T) {
	skipUnderRace(t)
	files := testModels(t)
	if corpus.SharedDir() != "" {
		for _, e := range corpus.Manifest(t) {
			files = append(files, e.Path)
		}
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			t.Parallel()
			data, err := os.ReadFile(f)
			require.NoError(t, err)
			for _, name := range plan.BuiltinPlatformNames() {
				p, err := plan.BuiltinPlatform(name)
				require.NoError(t, err)
				cfg := testConfig(emit.ModelName(f))
				cfg.Plan.Platform = &p
				if _, fits := compileOrFull(t, data, cfg, name); !fits {
					t.Logf("%s: does not fit %s", filepath.Base(f), name)
				}
			}
		})
	}
}

// randomPlatform returns a platform of 2 to 4 writable banks, with small
// capacities so that random models spill, and one read-only bank; and
// random class rules for it.
func randomPlatform(r *rand.Rand) (plan.Platform, []plan.Rule) {
	p := plan.Platform{Name: "random"}
	n := 2 + r.IntN(3)
	aligns := []int64{0, 0, 16, 32, 64}
	var writable []string
	for i := range n {
		b := plan.Bank{Name: fmt.Sprintf("RAM%d", i), Writable: true, Alignment: aligns[r.IntN(len(aligns))],
			Capacity: int64(16 * (1 + r.IntN(64))), Order: r.IntN(4)}
		if i == n-1 && r.IntN(2) == 0 {
			b.Capacity = 0 // unlimited, so that most models fit somewhere
		}
		p.Banks = append(p.Banks, b)
		writable = append(writable, b.Name)
	}
	flash := plan.Bank{Name: "FLASH", Order: n}
	if r.IntN(4) == 0 {
		flash.Capacity = int64(256 * (1 + r.IntN(16)))
	}
	p.Banks = append(p.Banks, flash)
	r.Shuffle(len(p.Banks), func(i, j int) { p.Banks[i], p.Banks[j] = p.Banks[j], p.Banks[i] })

	var rules []plan.Rule
	pick := func() string { return writable[r.IntN(len(writable))] }
	for range r.IntN(4) {
		switch r.IntN(4) {
		case 0:
			rules = append(rules, plan.Rule{Class: "scratch", Memory: pick()})
		case 1:
			rules = append(rules, plan.Rule{Class: "persistent", Memory: pick()})
		case 2:
			rules = append(rules, plan.Rule{Class: "constant", Memory: pick(), Source: "FLASH"})
		case 3:
			rules = append(rules, plan.Rule{Class: "constant", Memory: "FLASH"})
		}
	}
	return p, rules
}

// scratchTotal is the bytes of every scratch arena of a plan.
func scratchTotal(p *plan.Plan) int64 {
	size, _ := p.ScratchTotals()
	return size
}

// scratchLayout describes a plan's scratch arenas and spills for messages.
func scratchLayout(p *plan.Plan) string {
	s := ""
	for _, a := range p.Arenas {
		if a.Role == liveness.Scratch {
			s += fmt.Sprintf("%s %d (lower bound %d), ", a.Memory, a.Size, a.LowerBound)
		}
	}
	return s + fmt.Sprintf("%d spills", len(p.Spills))
}

// sameSpills reports whether two plans spill the same tensors between the
// same banks, in the same order: then every bank holds the same tensors in
// both.
func sameSpills(a, b []plan.Spill) bool {
	return slices.EqualFunc(a, b, func(x, y plan.Spill) bool { return x.Key == y.Key && x.From == y.From && x.To == y.To })
}

// compareBest checks PlannerBest's plan b against PlannerTFLM's plan g for
// one platform: best never needs more scratch bytes in total (plan.Build
// also tries TFLM's fit decisions and keeps the smaller plan), and where
// both banks hold the same tensors (the spills agree), best's arena is
// never larger bank by bank.
func compareBest(t *testing.T, what string, p plan.Platform, b, g *plan.Plan) {
	t.Helper()
	assert.LessOrEqual(t, scratchTotal(b), scratchTotal(g), "%s: scratch bytes in total, best (%s) vs tflm (%s)",
		what, scratchLayout(b), scratchLayout(g))
	if sameSpills(b.Spills, g.Spills) {
		for _, ga := range g.Arenas {
			if ga.Role != liveness.Scratch {
				continue
			}
			for _, ba := range b.Arenas {
				if ba.Role == liveness.Scratch && ba.Memory == ga.Memory {
					assert.LessOrEqual(t, ba.Size, ga.Size, "%s: scratch arena in %s, best vs tflm", what, ga.Memory)
				}
			}
		}
		assert.LessOrEqual(t, scratchTotal(b), scratchTotal(g), "%s: scratch bytes, best (%s) vs tflm (%s)",
			what, scratchLayout(b), scratchLayout(g))
		return
	}
}

// unlimited returns p with every capacity lifted.
func unlimited(p plan.Platform) plan.Platform {
	p.Banks = slices.Clone(p.Banks)
	for i := range p.Banks {
		p.Banks[i].Capacity = 0
	}
	return p
}

// TestCompileRandomPlatforms compiles random models (internal/randmodel)
// on random multi-bank platforms under random class rules. Each either
// compiles, and its plan verifies, or returns a *plan.CapacityError.
// PlannerBest fits wherever PlannerTFLM does and, bank by bank, never needs
// more scratch bytes for the same tensors (compareBest); on the same
// platform without capacities, where nothing spills, never more in all.
func TestCompileRandomPlatforms(t *testing.T) {
	n := int64(300)
	if testing.Short() || raceEnabled {
		n = 30
	}
	presets := randmodel.Presets()
	fits, full := 0, 0
	for seed := range n {
		preset := presets[int(seed)%len(presets)]
		r := rand.New(rand.NewPCG(uint64(seed), 0x5eed))
		data := encodeRandom(t, seed, preset.Config)
		small, rules := randomPlatform(r)
		noAlias := r.IntN(4) == 0
		for _, p := range []plan.Platform{small, unlimited(small)} {
			what := fmt.Sprintf("%s seed %d on %+v with rules %+v", preset.Name, seed, p.Banks, rules)
			cfg := func(planner string) driver.Config {
				c := randConfig(noAlias)
				c.Plan = plan.Options{Platform: &p, Rules: rules, Planner: planner, TimeLimit: 500 * time.Millisecond}
				return c
			}
			b, bFits := compileOrFull(t, data, cfg(plan.PlannerBest), what+", planner best")
			g, gFits := compileOrFull(t, data, cfg(plan.PlannerTFLM), what+", planner tflm")
			switch {
			case bFits && gFits:
				fits++
				compareBest(t, what, p, b.Plan, g.Plan)
			case gFits:
				t.Errorf("%s: planner tflm fits, best does not", what)
			default:
				full++
			}
		}
	}
	t.Logf("%d of %d compilations fit their platform, %d did not", fits, 2*n, full)
	// The capacities are meant to make both outcomes common.
	assert.NotZero(t, full, "every random model fitted")
}

// TestCompileRandomHottest compiles random models on random platforms
// (randomPlatform) with a rule staging the hottest constants into a random
// writable bank up to a random budget, last so that it decides for every
// constant no tensor or name rule names. Each either compiles, and its plan
// verifies (the verifier checks that the constants staged are the hottest
// that fit), or returns a *plan.CapacityError; and some plans stage
// constants under the budget while leaving others out.
func TestCompileRandomHottest(t *testing.T) {
	n := int64(120)
	if testing.Short() || raceEnabled {
		n = 20
	}
	presets := randmodel.Presets()
	fits, partial := 0, 0
	for seed := range n {
		preset := presets[int(seed)%len(presets)]
		r := rand.New(rand.NewPCG(uint64(seed), 0x407))
		data := encodeRandom(t, seed, preset.Config)
		p, rules := randomPlatform(r)
		// A bank no other constant rule stages into from FLASH: the
		// rules may not share one (plan.ValidateRules).
		var writable []string
		for _, b := range p.Banks {
			if b.Writable && !slices.Contains(rules, plan.Rule{Class: "constant", Memory: b.Name, Source: "FLASH"}) {
				writable = append(writable, b.Name)
			}
		}
		if len(writable) == 0 {
			continue
		}
		hot := plan.Rule{Class: "constant", Memory: writable[r.IntN(len(writable))], Source: "FLASH", Hottest: int64(16 * (1 + r.IntN(32)))}
		rules = append(rules, hot)
		what := fmt.Sprintf("%s seed %d on %+v with rules %+v", preset.Name, seed, p.Banks, rules)
		c := randConfig(r.IntN(4) == 0)
		c.Plan = plan.Options{Platform: &p, Rules: rules, TimeLimit: 500 * time.Millisecond}
		out, ok := compileOrFull(t, data, c, what)
		if !ok {
			continue
		}
		fits++
		staged, cold := int64(0), 0
		for _, a := range out.Plan.Allocs {
			if a.Class != liveness.Constant {
				continue
			}
			if ar := out.Plan.Arena(a.Arena); ar.Memory == hot.Memory && ar.Source == hot.Source {
				staged += a.Size
			} else {
				cold++
			}
		}
		if staged > 0 && cold > 0 {
			partial++
		}
	}
	t.Logf("%d of %d compilations fit; %d staged some constants and left others", fits, n, partial)
	assert.NotZero(t, partial, "the budget never split the constants")
}
