package randmodel_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/heliac/heliac/graph"
	"github.com/heliac/heliac/internal/randmodel"
	"github.com/heliac/heliac/tflite"
)

// seeds returns n, or a fifth of it with -short.
func seeds(n int) int {
	if testing.Short() || raceEnabled {
		return n / 5
	}
	return n
}

// TestRoundTrip writes each generated model as a .tflite file and reads it
// back: Load must accept it and return the model unchanged (every seventh
// with its buffers in the external offset/size form, which Load marks;
// every third with hostile names).
func TestRoundTrip(t *testing.T) {
	for seed := range int64(seeds(500)) {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			presets := randmodel.Presets()
			cfg := presets[int(seed)%len(presets)].Config
			cfg.HostileNames = seed%3 == 0
			m := randmodel.Generate(seed, cfg)
			data, err := tflite.Encode(m, tflite.EncodeOptions{ExternalBuffers: seed%7 == 0})
			require.NoError(t, err, "seed %d", seed)
			got, err := tflite.Load(data)
			require.NoError(t, err, "seed %d", seed)
			require.Len(t, got.Subgraphs, len(m.Subgraphs), "seed %d", seed)
			for i := range m.Subgraphs {
				assert.Len(t, got.Subgraphs[i].Tensors, len(m.Subgraphs[i].Tensors), "seed %d subgraph %d", seed, i)
				assert.Len(t, got.Subgraphs[i].Ops, len(m.Subgraphs[i].Ops), "seed %d subgraph %d", seed, i)
			}
			if seed%7 == 0 {
				for i := range got.Buffers {
					assert.Equal(t, len(got.Buffers[i].Data) > 0, got.Buffers[i].External, "seed %d buffer %d", seed, i)
					got.Buffers[i].External = false
				}
			}
			assert.Equal(t, m, got, "seed %d", seed)
		})
	}
}

// TestDeterministic checks that a seed always gives the same model.
func TestDeterministic(t *testing.T) {
	for seed := range int64(20) {
		assert.Equal(t, randmodel.Generate(seed, randmodel.Config{}), randmodel.Generate(seed, randmodel.Config{}), "seed %d", seed)
	}
	assert.NotEqual(t, randmodel.Generate(1, randmodel.Config{}), randmodel.Generate(2, randmodel.Config{}))
}

// TestHostileNames checks that hostile names change nothing but names,
// and keep distinct resource variables distinct.
func TestHostileNames(t *testing.T) {
	for seed := range int64(50) {
		plain := randmodel.Generate(seed, randmodel.Config{})
		hostile := randmodel.Generate(seed, randmodel.Config{HostileNames: true})
		require.Len(t, hostile.Subgraphs, len(plain.Subgraphs))
		vars := map[graph.ResourceName]graph.ResourceName{}
		for si, sg := range hostile.Subgraphs {
			for ti, tn := range sg.Tensors {
				want := plain.Subgraphs[si].Tensors[ti]
				assert.NotEqual(t, want.Name, tn.Name)
				tn.Name = want.Name
				assert.Equal(t, want, tn, "seed %d tensor %d:%d", seed, si, ti)
			}
			for oi, op := range sg.Ops {
				if op.Resource != nil {
					from := *plain.Subgraphs[si].Ops[oi].Resource
					if to, ok := vars[from]; ok {
						assert.Equal(t, to, *op.Resource, "seed %d: one variable, one name", seed)
					}
					vars[from] = *op.Resource
				}
			}
		}
		seen := map[graph.ResourceName]bool{}
		for _, to := range vars {
			assert.False(t, seen[to], "seed %d: two variables named %q", seed, to)
			seen[to] = true
		}
	}
}

// TestCoverage checks that, over many seeds, the generator produces every
// feature its package doc promises.
func TestCoverage(t *testing.T) {
	seen := map[string]bool{}
	for seed := range int64(seeds(500)) {
		m := randmodel.Generate(seed, randmodel.Config{})
		for name, ok := range features(m) {
			seen[name] = seen[name] || ok
		}
	}
	for _, f := range []string{
		"while", "if", "call_once", "nested call", "callee called twice", "uncalled subgraph",
		"view", "view of view", "view of input", "optional input", "is_variable",
		"var_handle", "read_variable", "assign_variable", "handle into callee",
		"variable in two subgraphs", "zero-size", "dynamic", "input is output",
		"shared buffer", "string constant", "intermediate", "subgraph output is input",
		"handles with and without a container",
	} {
		assert.True(t, seen[f], "no seed produced %q", f)
	}
}

func features(m *graph.Model) map[string]bool {
	f := map[string]bool{}
	calls := map[graph.SubgraphIndex]int{}
	varSubgraphs := map[graph.ResourceName]map[int]bool{}
	withContainer, without := map[string]bool{}, map[string]bool{}
	bufUsers := map[graph.BufferIndex]int{}
	for si, sg := range m.Subgraphs {
		views := map[graph.TensorID]bool{}
		inputs := map[graph.TensorID]bool{}
		for _, t := range sg.Inputs {
			inputs[t] = true
			if sg.Tensors[t].Type == graph.Resource {
				f["handle into callee"] = true
			}
			for _, o := range sg.Outputs {
				f["input is output"] = f["input is output"] || (si == 0 && o == t)
				f["subgraph output is input"] = f["subgraph output is input"] || (si > 0 && o == t)
			}
		}
		for _, t := range sg.Tensors {
			f["is_variable"] = f["is_variable"] || t.IsVariable
			f["dynamic"] = f["dynamic"] || t.IsDynamic()
			f["zero-size"] = f["zero-size"] || (t.Size == 0 && t.Type != graph.Resource && t.Type != graph.String)
			f["string constant"] = f["string constant"] || (t.Type == graph.String && m.HasData(&t))
			if m.HasData(&t) {
				bufUsers[t.Buffer]++
			}
		}
		for _, op := range sg.Ops {
			for _, c := range op.Called {
				calls[c]++
				if si > 0 {
					f["nested call"] = true
				}
			}
			for _, in := range op.Inputs {
				f["optional input"] = f["optional input"] || in == graph.NoTensor
			}
			f["intermediate"] = f["intermediate"] || len(op.Intermediates) > 0
			switch op.Code {
			case graph.While:
				f["while"] = true
			case graph.If:
				f["if"] = true
			case graph.CallOnce:
				f["call_once"] = true
			case graph.VarHandle:
				f["var_handle"] = true
				withContainer[op.Resource.SharedName] = withContainer[op.Resource.SharedName] || op.Resource.HasContainer
				without[op.Resource.SharedName] = without[op.Resource.SharedName] || !op.Resource.HasContainer
				if varSubgraphs[*op.Resource] == nil {
					varSubgraphs[*op.Resource] = map[int]bool{}
				}
				varSubgraphs[*op.Resource][si] = true
			case graph.ReadVariable:
				f["read_variable"] = true
			case graph.AssignVariable:
				f["assign_variable"] = true
			case graph.Reshape, graph.Squeeze, graph.ExpandDims, graph.Bitcast:
				f["view"] = true
				f["view of view"] = f["view of view"] || views[op.Inputs[0]]
				f["view of input"] = f["view of input"] || inputs[op.Inputs[0]]
				views[op.Outputs[0]] = true
			}
		}
	}
	for s := 1; s < len(m.Subgraphs); s++ {
		f["uncalled subgraph"] = f["uncalled subgraph"] || calls[graph.SubgraphIndex(s)] == 0
		f["callee called twice"] = f["callee called twice"] || calls[graph.SubgraphIndex(s)] > 1
	}
	for _, s := range varSubgraphs {
		f["variable in two subgraphs"] = f["variable in two subgraphs"] || len(s) > 1
	}
	for _, n := range bufUsers {
		f["shared buffer"] = f["shared buffer"] || n > 1
	}
	for name := range without {
		f["handles with and without a container"] = f["handles with and without a container"] || withContainer[name]
	}
	return f
}

// TestWellFormed checks the invariants the package doc promises.
func TestWellFormed(t *testing.T) {
	for seed := range int64(seeds(300)) {
		m := randmodel.Generate(seed, randmodel.Config{})
		where := func(si, oi int) string { return fmt.Sprintf("seed %d op %d:%d", seed, si, oi) }
		require.Empty(t, m.Buffers[0].Data, "seed %d: buffer 0 is the empty sentinel", seed)
		for si, sg := range m.Subgraphs {
			for ti, tt := range sg.Tensors {
				size, err := graph.ByteSize(tt.Type, tt.Shape)
				require.NoError(t, err)
				if tt.Type == graph.String {
					size = int64(len(m.Buffers[tt.Buffer].Data))
				}
				assert.Equal(t, size, tt.Size, "seed %d tensor %d:%d: size", seed, si, ti)
				if d := m.Buffers[tt.Buffer].Data; len(d) > 0 {
					assert.Len(t, d, int(tt.Size), "seed %d tensor %d:%d: constant data", seed, si, ti)
				}
			}
			for oi, op := range sg.Ops {
				for _, c := range op.Called {
					assert.Greater(t, int(c), si, "%s calls a subgraph with a smaller index", where(si, oi))
				}
				in := func(i int) graph.Tensor { return sg.Tensors[op.Inputs[i]] }
				switch op.Code {
				case graph.While:
					cond, body := m.Subgraphs[op.Called[0]], m.Subgraphs[op.Called[1]]
					n := len(op.Inputs)
					assert.Len(t, op.Outputs, n, where(si, oi))
					assert.Len(t, cond.Inputs, n, where(si, oi))
					if assert.Len(t, cond.Outputs, 1, where(si, oi)) {
						assert.Equal(t, graph.Bool, cond.Tensors[cond.Outputs[0]].Type, where(si, oi))
					}
					assert.Len(t, body.Inputs, n, where(si, oi))
					if assert.Len(t, body.Outputs, n, where(si, oi)) {
						for i := range n {
							assert.Equal(t, in(i).Shape, body.Tensors[body.Inputs[i]].Shape, where(si, oi))
							assert.Equal(t, in(i).Shape, body.Tensors[body.Outputs[i]].Shape, where(si, oi))
							assert.Equal(t, in(i).Type, sg.Tensors[op.Outputs[i]].Type, where(si, oi))
						}
					}
				case graph.If:
					assert.Equal(t, graph.Bool, in(0).Type, where(si, oi))
					n := len(op.Inputs) - 1
					for _, c := range op.Called {
						assert.Len(t, m.Subgraphs[c].Inputs, n, where(si, oi))
						assert.Len(t, m.Subgraphs[c].Outputs, len(op.Outputs), where(si, oi))
					}
				case graph.CallOnce:
					assert.Empty(t, op.Inputs, where(si, oi))
					assert.Empty(t, op.Outputs, where(si, oi))
					init := m.Subgraphs[op.Called[0]]
					assert.Empty(t, init.Inputs, where(si, oi))
					assert.Empty(t, init.Outputs, where(si, oi))
				case graph.Reshape, graph.Squeeze, graph.ExpandDims, graph.Bitcast:
					assert.Equal(t, in(0).Size, sg.Tensors[op.Outputs[0]].Size, "%s: a view keeps its input's size", where(si, oi))
				case graph.VarHandle:
					assert.Equal(t, graph.Resource, sg.Tensors[op.Outputs[0]].Type, where(si, oi))
				case graph.AssignVariable, graph.ReadVariable:
					assert.Equal(t, graph.Resource, in(0).Type, where(si, oi))
				}
			}
		}
	}
}

// TestCallChainRoundTrip checks that CallChain's model is one Load returns.
func TestCallChainRoundTrip(t *testing.T) {
	m := randmodel.CallChain(3, 2)
	data, err := tflite.Encode(m, tflite.EncodeOptions{})
	require.NoError(t, err)
	got, err := tflite.Load(data)
	require.NoError(t, err)
	assert.Equal(t, m, got)
}
