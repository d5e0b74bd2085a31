package driver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/heliac/heliac"
	"github.com/heliac/heliac/driver"
	"github.com/heliac/heliac/emit"
	"github.com/heliac/heliac/graph"
	"github.com/heliac/heliac/internal/corpus"
	"github.com/heliac/heliac/internal/tflmrun"
	"github.com/heliac/heliac/tflite"
	"github.com/heliac/heliac/tflmarena"
	"github.com/heliac/heliac/verify"
)

// m55Tool returns tflm_run_m55 when it and QEMU are there, or "".
func m55Tool() string { return runnerTool("tflm_run_m55", true) }

// TestTFLMArenaExact is issue 21's done-when check. For every corpus
// model TFLM runs: the model heliac emits (--emit-tflite, the CLI's
// defaults) allocates and runs under tflm_run with exactly heliac's
// host64 arena and fails to allocate with 16 bytes less, with the
// original model's outputs; heliac's figure for the original model under
// TFLM's own planner is exact the same way; and the same on
// tflm_run_m55 (an emulated Cortex-M55) with the cortex-m figures, run in
// the background with one invocation (make test: tflmArenaSubset's models
// there; HELIAC_FULL_SWEEP=1, make full-sweep, every one). -short checks ten of the
// models and not the M55; under the race detector (tenfold slower
// compiles) the same models, the M55 included.
//
// The runners keep their GreedyMemoryPlanner outside the arena
// (tflmarena.PlannerOutside) and keep its answers as TFLM got them, so at
// any arena a run either fails in TFLM or allocates and runs: the figure
// runs, with the original's outputs, and 16 bytes less fails.
func TestTFLMArenaExact(t *testing.T) {
	skipUnderRace(t)
	tool := tflmrun.Require(t)
	dir := corpus.Require(t)
	rows, err := corpus.ReadTSV(filepath.Join(dir, "bench", "tflm-reference.tsv"))
	require.NoError(t, err)
	m55 := ""
	if !testing.Short() {
		m55 = m55Tool()
	}
	if m55 == "" {
		t.Log("tflm_run_m55 or qemu-system-arm not found (or -short): cortex-m figures not checked")
	}
	tmp := t.TempDir()
	// The M55 runs go on in the background while the host ones run:
	// QEMU is slow. One at a time, as the machine may have few cores.
	var (
		mu       sync.Mutex
		wg       sync.WaitGroup
		m55Exact = map[string]int{}
		m55Total int
		m55Out   = map[string]map[string]string{} // name/what -> outputs of a clean run
		sem      = make(chan struct{}, 1)
	)
	m55Check := func(name, what, file string, a tflmarena.Arena) {
		n := a.Bytes
		defer wg.Done()
		sem <- struct{}{}
		defer func() { <-sem }()
		// A small model's run is quick; a large one's arena takes QEMU
		// a while to fill and invoke.
		limit := 10*time.Second + time.Duration(n>>14)*time.Second
		at, o := runOracle(context.Background(), m55, file, n, limit)
		less, l := runOracle(context.Background(), m55, file, n-16, limit)
		mu.Lock()
		defer mu.Unlock()
		if at == ran && less == allocFailed {
			m55Exact[name]++
			m55Out[name+"/"+what] = o
			return
		}
		t.Errorf("%s %s on tflm_run_m55: arena %d gives %d (%v), 16 less gives %d (%v)", name, what, n, at, o["error"], less, l["error"])
	}
	var exact, known, total int
	var logRatio float64
	for _, row := range rows {
		if row["status"] != "ok" {
			continue
		}
		name := row["model"]
		total++
		if (testing.Short() || raceEnabled) && !tflmArenaSubset[name] {
			continue
		}
		file := filepath.Join(dir, "corpus", name)
		data, err := os.ReadFile(file)
		require.NoError(t, err)
		cfg, err := heliac.Options{Kernels: "tflm-reference", EmitTFLite: true, Version: "test"}.Config()
		require.NoError(t, err)
		cfg.ModelName, cfg.TFLMTarget = emit.ModelName(name), "host64"
		out, err := driver.Compile(context.Background(), data, cfg)
		require.NoError(t, err, name)
		if out.TFLMArena == nil {
			require.Error(t, out.TFLMArenaErr, name)
			t.Logf("%s: no figure: %v", name, out.TFLMArenaErr)
			continue
		}
		emitted := filepath.Join(tmp, strings.ReplaceAll(name, "/", "_"))
		require.NoError(t, os.WriteFile(emitted, out.TFLite.Data, 0o644))
		// The cortex-m figures from the same heads (no corpus kernel's
		// scratch depends on the pointer size).
		em, err := tflite.Load(out.TFLite.Data)
		require.NoError(t, err)
		// tflm_run keeps its planner outside the arena: the figures it is
		// checked against are for that setup (the Output's are for an
		// application's MicroInterpreter, whose planner is in the arena).
		outside := func(m *graph.Model, head int64, target tflmarena.Target) tflmarena.Arena {
			a, err := tflmarena.ComputeSetup(m, head, target, tflmarena.Kernels{}, tflmarena.PlannerOutside)
			require.NoError(t, err, name)
			return a
		}
		cm := &driver.TFLMArenas{Target: "cortex-m", Emitted: outside(em, out.TFLMArena.Emitted.Head, tflmarena.CortexM),
			Original: outside(out.Model, out.TFLMArena.Original.Head, tflmarena.CortexM)}
		known++
		host := &driver.TFLMArenas{Target: "host64", Emitted: outside(em, out.TFLMArena.Emitted.Head, tflmarena.Host64),
			Original: outside(out.Model, out.TFLMArena.Original.Head, tflmarena.Host64)}
		assert.Greater(t, out.TFLMArena.Emitted.Bytes, host.Emitted.Bytes-16, "%s: the planner in the arena takes bytes", name)
		ref, refOut := runOracle(context.Background(), tool, file, 2*host.Original.Bytes+64<<10, time.Minute)
		require.Equal(t, ran, ref, "%s: %v", name, refOut)
		assert.Equal(t, refOut["planner_max_bytes"], itoa(host.Original.Head), "%s: TFLM's own head", name)
		assert.Equal(t, refOut["tail_bytes"], itoa(host.Original.Tail), "%s: TFLM's tail", name)
		ok := true
		for _, c := range []struct {
			what, file string
			a          tflmarena.Arena
		}{{"original", file, host.Original}, {"emitted", emitted, host.Emitted}} {
			limit := 10*time.Second + time.Duration(c.a.Bytes>>16)*time.Second
			at, o := runOracle(context.Background(), tool, c.file, c.a.Bytes, limit)
			less, l := runOracle(context.Background(), tool, c.file, c.a.Bytes-16, limit)
			switch {
			case at == ran && fillDependent[name]:
			case at == ran:
				for k, v := range refOut {
					if strings.HasPrefix(k, "output.0.") && o[k] != v {
						ok = false
						t.Errorf("%s %s: %s differs", name, c.what, k)
					}
				}
			default:
				ok = false
				t.Errorf("%s %s: arena %d does not allocate: %v", name, c.what, c.a.Bytes, o["error"])
			}
			if less != allocFailed {
				ok = false
				t.Errorf("%s %s: arena %d-16 does not fail to allocate: %v", name, c.what, c.a.Bytes, l)
			}
		}
		if ok {
			exact++
		}
		logRatio += math.Log(float64(host.Emitted.Bytes) / float64(host.Original.Bytes))
		if m55 != "" && (tflmArenaSubset[name] || os.Getenv(envFullSweep) != "") {
			m55Total++
			wg.Add(2)
			go m55Check(name, "original", file, cm.Original)
			go m55Check(name, "emitted", emitted, cm.Emitted)
		}
	}
	t.Logf("host64: %d of %d models checked exact (of %d TFLM runs); geometric mean of whole arena emitted/original %.4f",
		exact, known, total, math.Exp(logRatio/float64(max(known, 1))))
	if m55 == "" {
		return
	}
	wg.Wait()
	// On the M55 float kernels round unlike the host's: compare the
	// emitted model's outputs with the original's there.
	for key, o := range m55Out {
		name, what, _ := strings.Cut(key, "/")
		e, ok := m55Out[name+"/emitted"]
		if what != "original" || !ok || fillDependent[name] {
			continue
		}
		for k, v := range o {
			if strings.HasPrefix(k, "output.0.") && e[k] != v {
				t.Errorf("%s on tflm_run_m55: %s differs between the original and the emitted model", name, k)
			}
		}
	}
	n := 0
	for _, k := range m55Exact {
		if k == 2 {
			n++
		}
	}
	t.Logf("cortex-m: %d of %d models exact on tflm_run_m55", n, m55Total)
}

// tflmArenaSubset are the models -short and the race detector check: one
// or more of every kind of kernel data (convolutions, SVDF, LSTM,
// resource variables, CALL_ONCE and WHILE subgraphs, the signal library,
// transposed convolution), all small.
var tflmArenaSubset = map[string]bool{
	"tflite-micro/hello_world_int8.tflite": true, "tflite-micro/person_detect.tflite": true,
	"tflite-micro/keyword_scrambled.tflite": true, "tflite-micro/trained_lstm_int8.tflite": true,
	"litert/call_once_mul.bin": true, "litert/multi_subgraphs_while.bin": true,
	"tflite-micro/audio_preprocessor_int8.tflite": true, "tflite-micro/seanet_transpose_conv0.tflite": true,
	"tflite-micro/micro_speech_quantized.tflite": true, "esphome-mww/vad_v2.tflite": true,
}

// fillDependent are the corpus models whose outputs depend on the
// arena's contents (a tensor read that nothing writes:
// ../shared/tools/README.md), so on its size too.
var fillDependent = map[string]bool{"litert/add_shared_tensors.bin": true}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// TestTFLMArenaInPlanAndHeader: with --emit-tflite, plan.json's
// tflm_arena_bytes and tflm_target, the C header's
// <PREFIX>_TFLM_ARENA_SIZE and Output.TFLMArena agree, on each target;
// the verifier refuses a header whose size differs from plan.json's.
func TestTFLMArenaInPlanAndHeader(t *testing.T) {
	data, err := os.ReadFile("../testdata/models/hello_world_int8.tflite")
	require.NoError(t, err)
	for _, target := range []string{"", "cortex-m", "host64"} {
		cfg, err := heliac.Options{Kernels: "tflm-reference", EmitTFLite: true, Version: "test"}.Config()
		require.NoError(t, err)
		cfg.ModelName, cfg.TFLMTarget = "hello_world_int8", target
		out, err := driver.Compile(context.Background(), data, cfg)
		require.NoError(t, err)
		require.NotNil(t, out.TFLMArena, "%v", out.TFLMArenaErr)
		want := map[string]string{"": "cortex-m"}[target]
		if want == "" {
			want = target
		}
		a := out.TFLMArena
		assert.Equal(t, want, a.Target)
		assert.Zero(t, a.Emitted.Bytes%16)
		assert.GreaterOrEqual(t, a.Emitted.Bytes, a.Emitted.Head+a.Emitted.Tail)
		assert.Equal(t, out.TFLite.Offline.ArenaSize, a.Emitted.Head)
		var doc struct {
			Bytes  int64  `json:"tflm_arena_bytes"`
			Target string `json:"tflm_target"`
			Arenas []struct {
				Target      string `json:"target"`
				PointerSize int64  `json:"pointer_size"`
				Bytes       int64  `json:"bytes"`
				Error       string `json:"error"`
			} `json:"tflm_arenas"`
			Vars *int `json:"tflm_resource_variables"`
		}
		require.NoError(t, json.Unmarshal(out.PlanJSON, &doc))
		assert.Equal(t, a.Emitted.Bytes, doc.Bytes)
		assert.Equal(t, want, doc.Target)
		require.NotNil(t, doc.Vars)
		assert.Zero(t, *doc.Vars)
		// tflm_arenas: cortex-m then host64, both sized without
		// --tflm-target, the other one saying why not with it.
		require.Len(t, doc.Arenas, 2)
		assert.Equal(t, []string{"cortex-m", "host64"}, []string{doc.Arenas[0].Target, doc.Arenas[1].Target})
		assert.Equal(t, []int64{4, 8}, []int64{doc.Arenas[0].PointerSize, doc.Arenas[1].PointerSize})
		for _, e := range doc.Arenas {
			switch {
			case e.Target == want:
				assert.Equal(t, a.Emitted.Bytes, e.Bytes)
			case target == "":
				require.NotNil(t, out.TFLMArenaHost)
				assert.Equal(t, out.TFLMArenaHost.Emitted.Bytes, e.Bytes)
				assert.Greater(t, e.Bytes, a.Emitted.Bytes, "TFLM's tail is larger with 64-bit pointers")
				host := fmt.Sprintf("#define HELLO_WORLD_INT8_TFLM_ARENA_SIZE %du\n", e.Bytes)
				tampered := strings.Replace(string(out.Files()[0].Data), host,
					fmt.Sprintf("#define HELLO_WORLD_INT8_TFLM_ARENA_SIZE %du\n", e.Bytes+16), 1)
				v := verify.PlanAndC(out.Model, out.PlanJSON, verify.Module{Header: []byte(tampered), Source: out.Files()[1].Data})
				assert.Contains(t, fmt.Sprint(v), "for 64-bit pointers, but plan.json's tflm_arenas gives host64")
			default:
				assert.Zero(t, e.Bytes)
				assert.Contains(t, e.Error, "heliac ran with --tflm-target "+target)
				assert.Nil(t, out.TFLMArenaHost)
				// A size where plan.json gives none is refused too.
				h := string(out.Files()[0].Data)
				guard := "#if defined(HELLO_WORLD_INT8_TFLM_REQUIRE_ARENA_SIZE)\n"
				require.Contains(t, h, guard)
				tampered := strings.Replace(h, guard, "#define HELLO_WORLD_INT8_TFLM_ARENA_SIZE 4096u\n"+guard, 1)
				v := verify.PlanAndC(out.Model, out.PlanJSON, verify.Module{Header: []byte(tampered), Source: out.Files()[1].Data})
				assert.Contains(t, fmt.Sprint(v), "but plan.json's tflm_arenas gives "+e.Target+" none")
			}
		}
		files := out.Files()
		define := fmt.Sprintf("#define HELLO_WORLD_INT8_TFLM_ARENA_SIZE %du\n", a.Emitted.Bytes)
		require.Contains(t, string(files[0].Data), define)
		tampered := strings.Replace(string(files[0].Data), define,
			fmt.Sprintf("#define HELLO_WORLD_INT8_TFLM_ARENA_SIZE %du\n", a.Emitted.Bytes-16), 1)
		v := verify.PlanAndC(out.Model, out.PlanJSON, verify.Module{Header: []byte(tampered), Source: files[1].Data})
		require.NotEmpty(t, v)
		assert.Contains(t, fmt.Sprint(v), "TFLM_ARENA_SIZE")
	}
	cfg, err := heliac.Options{Kernels: "tflm-reference", EmitTFLite: true, Version: "test"}.Config()
	require.NoError(t, err)
	cfg.ModelName, cfg.TFLMTarget = "hello_world_int8", "riscv"
	_, err = driver.Compile(context.Background(), data, cfg)
	require.ErrorContains(t, err, `unknown TFLM target "riscv"`)
}

// TestTFLMArenaForCMSISNNKernels: a CMSIS-NN build gets the figure (and
// the macro) from the CMSIS-NN kernels' data: hello_world_int8's three
// int8 FULLY_CONNECTED operators take a larger OpData than the reference
// kernel's, and on an MVE CPU (cortex-m55) also keep their kernel sums
// persistently, which a DSP CPU (cortex-m4) does not.
func TestTFLMArenaForCMSISNNKernels(t *testing.T) {
	data, err := os.ReadFile("../testdata/models/hello_world_int8.tflite")
	require.NoError(t, err)
	compile := func(kernels, cpu string) *driver.Output {
		cfg, err := heliac.Options{Kernels: kernels, CPU: cpu, EmitTFLite: true, Version: "test"}.Config()
		require.NoError(t, err)
		cfg.ModelName = "hello_world_int8"
		out, err := driver.Compile(context.Background(), data, cfg)
		require.NoError(t, err)
		require.NoError(t, out.TFLMArenaErr, "%s %s", kernels, cpu)
		require.NotNil(t, out.TFLMArena, "%s %s", kernels, cpu)
		return out
	}
	ref := compile("tflm-reference", "")
	m4 := compile("cmsis-nn", "cortex-m4")
	m55 := compile("cmsis-nn", "cortex-m55")
	assert.Equal(t, "tflm-reference", ref.TFLMArena.Kernels)
	assert.Equal(t, "cmsis-nn (mve)", m55.TFLMArena.Kernels)
	assert.Equal(t, "cmsis-nn (dsp)", m4.TFLMArena.Kernels)
	assert.Equal(t, "cortex-m55", m55.TFLMArena.CPU)
	assert.Greater(t, m4.TFLMArena.Emitted.Tail, ref.TFLMArena.Emitted.Tail, "CMSIS-NN's OpData holds the reference one and more")
	assert.Greater(t, m55.TFLMArena.Emitted.Tail, m4.TFLMArena.Emitted.Tail, "kernel sums on MVE")
	for _, out := range []*driver.Output{m4, m55} {
		a := out.TFLMArena.Emitted.Bytes
		assert.Contains(t, string(out.CFiles[0].Data), fmt.Sprintf("#define HELLO_WORLD_INT8_TFLM_ARENA_SIZE %du\n", a))
		assert.Contains(t, string(out.PlanJSON), fmt.Sprintf(`"tflm_arena_bytes": %d`, a))
	}
}
