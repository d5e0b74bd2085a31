package driver_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/heliac/heliac/driver"
	"github.com/heliac/heliac/internal/randmodel"
	"github.com/heliac/heliac/kernels"
	"github.com/heliac/heliac/liveness"
	"github.com/heliac/heliac/tflite"
)

func randConfig(noAlias bool) driver.Config {
	return driver.Config{ModelName: "rand", Version: "test", Liveness: liveness.Options{NoAlias: noAlias}}
}

// randSeeds is how many seeds TestCompileRandom runs of each
// randmodel preset.
var randSeeds = map[string]int64{"default": 500, "large": 150, "deep": 150, "long": 150}

// encodeRandom returns the .tflite bytes of a random model.
func encodeRandom(t *testing.T, seed int64, cfg randmodel.Config) []byte {
	t.Helper()
	data, err := tflite.Encode(randmodel.Generate(seed, cfg), tflite.EncodeOptions{})
	require.NoError(t, err)
	return data
}

// TestCompileRandom compiles random models (internal/randmodel) with and
// without aliasing, and as the CLI does by default: in place under
// tflm-reference's contracts, in memory order. Compile verifies each
// emitted plan independently, so any planner, emitter or liveness bug
// shows up as a *driver.VerifyError. The random models must exercise
// in-place sliding windows, and so rigid alias groups.
func TestCompileRandom(t *testing.T) {
	lib, err := kernels.Lookup(kernels.TFLMReference)
	require.NoError(t, err)
	var mu sync.Mutex
	sweeps, shaped := 0, 0
	for _, p := range randmodel.Presets() {
		n := randSeeds[p.Name]
		if testing.Short() || raceEnabled {
			n /= 10
		}
		for seed := range n {
			t.Run(fmt.Sprintf("%s/seed=%d", p.Name, seed), func(t *testing.T) {
				data := encodeRandom(t, seed, p.Config)
				inPlace := randConfig(false)
				inPlace.Liveness.Kernels = lib
				for i, cfg := range []driver.Config{randConfig(false), randConfig(true), inPlace} {
					out, err := driver.Compile(context.Background(), data, cfg)
					var ve *driver.VerifyError
					if errors.As(err, &ve) {
						t.Errorf("%s seed %d, config %d: plan fails verification: %v", p.Name, seed, i, err)
						continue
					}
					require.NoError(t, err, "%s seed %d, config %d", p.Name, seed, i)
					for _, a := range out.Plan.Allocs {
						if a.InPlace != nil && a.InPlace.Contract.Overlap == kernels.Sweep {
							mu.Lock()
							sweeps++
							if a.AliasOffset != 0 {
								shaped++
							}
							mu.Unlock()
						}
					}
				}
			})
		}
	}
	t.Logf("%d sliding-window outputs written in place, %d of them off their input", sweeps, shaped)
	assert.Positive(t, sweeps, "random models write sliding windows in place")
	assert.Positive(t, shaped, "random models place an in-place output off its input")
}

// TestCompileRandomHostileNames compiles random models whose every name
// holds invalid UTF-8, control characters and C comment ends
// (randmodel.Config.HostileNames): each must compile and verify, write
// plan.json as UTF-8, and be planned exactly as the same model with plain
// names is (names place nothing).
func TestCompileRandomHostileNames(t *testing.T) {
	for _, p := range randmodel.Presets() {
		n := randSeeds[p.Name] / 5
		if testing.Short() || raceEnabled {
			n /= 10
		}
		for seed := range n {
			t.Run(fmt.Sprintf("%s/seed=%d", p.Name, seed), func(t *testing.T) {
				cfg := p.Config
				plain, err := driver.Compile(context.Background(), encodeRandom(t, seed, cfg), randConfig(false))
				require.NoError(t, err)
				cfg.HostileNames = true
				out, err := driver.Compile(context.Background(), encodeRandom(t, seed, cfg), randConfig(false))
				require.NoError(t, err, "%s seed %d", p.Name, seed)
				require.True(t, utf8.Valid(out.PlanJSON), "%s seed %d: plan.json is not UTF-8", p.Name, seed)
				assertHashRecomputed(t, out)
				require.Len(t, out.Plan.Allocs, len(plain.Plan.Allocs))
				for i, a := range out.Plan.Allocs {
					want := plain.Plan.Allocs[i]
					assert.Equal(t, []any{want.Kind, want.Ref, want.Arena, want.Offset, want.Size},
						[]any{a.Kind, a.Ref, a.Arena, a.Offset, a.Size}, "%s seed %d: allocation %d", p.Name, seed, i)
				}
			})
		}
	}
}

// TestCompileRandomDeterministic compiles a few random models twice and
// expects the same bytes. Verification failures are TestCompileRandom's
// business; a plan that fails it must still be deterministic.
func TestCompileRandomDeterministic(t *testing.T) {
	compile := func(t *testing.T, data []byte, noAlias bool) *driver.Output {
		out, err := driver.Compile(context.Background(), data, randConfig(noAlias))
		if ve := (*driver.VerifyError)(nil); !errors.As(err, &ve) {
			require.NoError(t, err, "NoAlias=%v", noAlias)
		}
		return out
	}
	for seed := range int64(10) {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			presets := randmodel.Presets()
			data := encodeRandom(t, seed, presets[int(seed)%len(presets)].Config)
			for _, noAlias := range []bool{false, true} {
				a, b := compile(t, data, noAlias), compile(t, data, noAlias)
				assert.Equal(t, string(a.PlanJSON), string(b.PlanJSON), "seed %d, NoAlias=%v: plan.json", seed, noAlias)
				assert.Equal(t, a.CFiles, b.CFiles, "seed %d, NoAlias=%v: C files", seed, noAlias)
			}
		})
	}
}
