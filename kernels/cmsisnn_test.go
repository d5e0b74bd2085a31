package kernels_test

import (
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/heliac/heliac/graph"
	"github.com/heliac/heliac/internal/corpus"
	"github.com/heliac/heliac/kernels"
)

// cmsisCase is one row of testdata/cmsisnn/requests.csv: an operator's
// geometry and types, a CPU variant, and the requests TFLM's cmsis_nn
// kernel makes, computed by CMSIS-NN's own *_get_buffer_size* functions
// at the pinned commit (testdata/cmsisnn/README.md says how).
type cmsisCase struct {
	op, types, variant, name, note string
	params                         map[string]int64
	padding                        graph.Padding
	want                           []int64
}

func readCMSISCases(t *testing.T) []cmsisCase {
	rows, err := corpus.ReadCSV(filepath.Join("testdata", "cmsisnn", "requests.csv"))
	require.NoError(t, err)
	var out []cmsisCase
	for i, r := range rows {
		c := cmsisCase{op: r["op"], types: r["types"], variant: r["variant"], name: r["case"], note: r["note"],
			params: map[string]int64{}, padding: graph.PaddingValid}
		for _, kv := range strings.Split(r["params"], ";") {
			k, v, ok := strings.Cut(kv, "=")
			require.True(t, ok, "row %d: %q", i+2, kv)
			if k == "padding" {
				if v == "SAME" {
					c.padding = graph.PaddingSame
				}
				continue
			}
			n, err := strconv.ParseInt(v, 10, 64)
			require.NoError(t, err, "row %d", i+2)
			c.params[k] = n
		}
		for _, s := range strings.Split(r["requests"], "|") {
			if s == "" {
				continue
			}
			n, err := strconv.ParseInt(s, 10, 64)
			require.NoError(t, err, "row %d", i+2)
			c.want = append(c.want, n)
		}
		out = append(out, c)
	}
	return out
}

// typeOf reads "in=int8;filter=int4"'s value for key; -1 when absent.
func (c cmsisCase) typeOf(key string) graph.ElementType {
	for _, kv := range strings.Split(c.types, ";") {
		if k, v, _ := strings.Cut(kv, "="); k == key {
			switch v {
			case "int8":
				return graph.Int8
			case "int4":
				return graph.Int4
			case "int16":
				return graph.Int16
			case "float32":
				return graph.Float32
			}
		}
	}
	return -1
}

// model builds the one-operator model a row describes.
func (c cmsisCase) model(t *testing.T) (*graph.Model, *graph.Op) {
	p := func(k string) int32 {
		v, ok := c.params[k]
		require.True(t, ok, "%s: no %s", c.name, k)
		return int32(v)
	}
	in := c.typeOf("in")
	var ts []graph.Tensor
	var inputs []graph.TensorID
	var window *graph.Window
	var code graph.Opcode
	add := func(tt graph.Tensor) graph.TensorID {
		ts = append(ts, tt)
		return graph.TensorID(len(ts) - 1)
	}
	buffers := []graph.Buffer{{}, {Data: []byte{1}}}
	switch c.op {
	case "CONV_2D":
		code = graph.Conv2D
		inputs = []graph.TensorID{add(tensor(in, p("n"), p("ih"), p("iw"), p("ic"))),
			add(tensor(c.typeOf("filter"), p("oc"), p("fh"), p("fw"), p("fc")))}
		add(tensor(in, p("n"), p("oh"), p("ow"), p("oc")))
		window = &graph.Window{Padding: c.padding, StrideW: p("sw"), StrideH: p("sh"), DilationW: p("dw"), DilationH: p("dh")}
	case "DEPTHWISE_CONV_2D":
		code = graph.DepthwiseConv2D
		inputs = []graph.TensorID{add(tensor(in, p("n"), p("ih"), p("iw"), p("ic"))),
			add(tensor(c.typeOf("filter"), 1, p("fh"), p("fw"), p("oc")))}
		add(tensor(in, p("n"), p("oh"), p("ow"), p("oc")))
		window = &graph.Window{Padding: c.padding, StrideW: p("sw"), StrideH: p("sh"), DilationW: p("dw"), DilationH: p("dh"),
			DepthMultiplier: p("ch_mult")}
	case "FULLY_CONNECTED":
		code = 9
		filter := tensor(c.typeOf("filter"), p("out_depth"), p("accum"))
		bias := tensor(graph.Int32, p("out_depth"))
		if c.params["const_filter_and_bias"] == 1 {
			filter.Buffer, bias.Buffer = 1, 1
		}
		scales := 1
		if c.params["per_channel"] == 1 {
			scales = int(p("out_depth"))
		}
		filter.Quantization = &graph.Quantization{Scale: make([]float32, scales), ZeroPoint: make([]int64, scales)}
		inputs = []graph.TensorID{add(tensor(in, p("batches"), p("accum"))), add(filter), add(bias)}
		shape := []int32{p("batches"), p("out_depth")}
		for len(shape) < int(p("out_rank")) {
			shape = append([]int32{1}, shape...)
		}
		add(tensor(in, shape...))
	case "AVERAGE_POOL_2D":
		code = graph.AveragePool2D
		inputs = []graph.TensorID{add(tensor(in, 1, 2, 2*p("out_w"), p("depth")))}
		add(tensor(in, 1, 1, p("out_w"), p("depth")))
		window = &graph.Window{Padding: graph.PaddingValid, StrideW: 2, StrideH: 2, DilationW: 1, DilationH: 1, FilterW: 2, FilterH: 2}
	case "SVDF":
		code = 27
		inputs = []graph.TensorID{add(tensor(in, p("batch"), p("input_size"))),
			add(tensor(graph.Int8, p("num_filters"), p("input_size")))}
		add(tensor(in, p("batch"), p("num_units")))
	case "TRANSPOSE_CONV":
		code = graph.TransposeConv
		inputs = []graph.TensorID{add(tensor(graph.Int32, 4)), add(tensor(graph.Int8, p("oc"), p("fh"), p("fw"), p("ic"))),
			add(tensor(in, p("n"), p("ih"), p("iw"), p("ic")))}
		if c.typeOf("bias") == graph.Int16 {
			inputs = append(inputs, add(tensor(graph.Int16, p("oc"))))
		}
		add(tensor(in, p("n"), p("oh"), p("ow"), p("oc")))
		window = &graph.Window{Padding: c.padding, StrideW: p("sw"), StrideH: p("sh"), DilationW: 1, DilationH: 1}
	case "BATCH_MATMUL":
		code = 126
		shape := []int32{p("out_last_dim")}
		for len(shape) < int(p("out_rank")) {
			shape = append([]int32{2}, shape...)
		}
		inputs = []graph.TensorID{add(tensor(in, shape...)), add(tensor(in, shape...))}
		add(tensor(in, shape...))
	case "UNIDIRECTIONAL_SEQUENCE_LSTM":
		code = 44
		inputs = make([]graph.TensorID, 24)
		for i := range inputs {
			inputs[i] = graph.NoTensor
		}
		inputs[0] = add(tensor(in, p("batch"), 5, 3))
		inputs[18] = add(tensor(in, p("batch"), p("state_dim")))
		inputs[19] = add(tensor(c.typeOf("cell"), p("batch"), p("state_dim")))
		add(tensor(in, p("batch"), 5, p("state_dim")))
	default:
		t.Fatalf("%s: unknown operator %s", c.name, c.op)
	}
	m, op := scratchModel(code, "", ts, inputs, graph.TensorID(len(ts)-1))
	m.Buffers = buffers
	op.Window = window
	return m, op
}

// TestCMSISNNScratch: for every CPU variant, the requests cmsis-nn gives
// each operator equal those of TFLM's cmsis_nn kernels with CMSIS-NN's own
// size functions (GCC, TFLM's default KERNELS_OPTIMIZED_FOR_SPEED build):
// convolutions general, 1x1 (stride 1 and 2), 1xN and dilated, INT16 and
// INT4 filters; depthwise 3x3, multiplier 1 and more, one input channel,
// INT4; fully connected of rank 2 to 4, per-tensor and per-channel,
// constant and not; average pooling; SVDF; transpose convolution; batch
// matmul; LSTM. 0-byte requests (TRANSPOSE_CONV's second) are dropped by
// the planner and compared as such.
func TestCMSISNNScratch(t *testing.T) {
	lib, err := kernels.Lookup(kernels.CMSISNN)
	require.NoError(t, err)
	isa := map[string]kernels.ISA{"none": kernels.NoDSP, "dsp": kernels.DSP, "mve": kernels.MVE}
	cases := readCMSISCases(t)
	perVariant := map[string]int{}
	for _, c := range cases {
		t.Run(c.op+"/"+c.types+"/"+c.variant+"/"+c.name, func(t *testing.T) {
			m, op := c.model(t)
			target := kernels.Target{PointerSize: 4, ISA: isa[c.variant]}
			got, known := lib.On(isa[c.variant]).Scratch(m, 0, op, target)
			require.True(t, known)
			assert.Equal(t, nonZero(c.want), nonZero(got), "%s", c.note)
			perVariant[c.variant]++
		})
	}
	for _, v := range []string{"none", "dsp", "mve"} {
		assert.GreaterOrEqual(t, perVariant[v], 200, "cases for %s", v)
	}
}

func nonZero(v []int64) []int64 {
	var out []int64
	for _, n := range v {
		if n != 0 {
			out = append(out, n)
		}
	}
	return out
}

// TestCPU maps --cpu names to targets and refuses unknown ones.
func TestCPU(t *testing.T) {
	for name, isa := range map[string]kernels.ISA{"cortex-m0": kernels.NoDSP, "cortex-m3": kernels.NoDSP,
		"cortex-m4": kernels.DSP, "cortex-m7": kernels.DSP, "cortex-m33": kernels.DSP,
		"cortex-m55": kernels.MVE, "cortex-m85": kernels.MVE} {
		got, err := kernels.CPU(name)
		require.NoError(t, err)
		assert.Equal(t, kernels.Target{CPU: name, PointerSize: 4, ISA: isa}, got, name)
	}
	_, err := kernels.CPU("cortex-a53")
	require.ErrorContains(t, err, `unknown CPU "cortex-a53" (known: generic, cortex-m0,`)
}
