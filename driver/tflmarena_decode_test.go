package driver_test

import (
	"context"
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/heliac/heliac/graph"
	"github.com/heliac/heliac/internal/tflmrun"
	"github.com/heliac/heliac/tflite"
)

// Models of TFLM's custom operator TFLM_DECODE (kernels/tflmtail_decode.go)
// with ancillary tensors in the Decode Common Metadata format of
// tensorflow/lite/micro/kernels/decode_state*.h at 90b983c: 16 bytes of
// DCM (byte 0 the decode type, 1 the DCM version, 4 the type's version,
// 5 and 6 type parameters), then the type's tables. Each variant also
// returns the bytes TFLM's decoder must produce, so the runners' output
// digests check the encoding, not only the arena.

// dcmHeader is a DCM of decode type ty, versions 1, with bytes 5 and 6.
func dcmHeader(ty, b5, b6 byte) []byte {
	d := make([]byte, 16)
	d[0], d[1], d[4], d[5], d[6] = ty, 1, 1, b5, b6
	return d
}

// packMSB packs values of width bits each, most significant bit first
// (decode_state_lut.cc GetNextTableIndexWidth<N>; width 1 is
// decode_state_prune.cc's bit mask).
func packMSB(vals []int, width int) []byte {
	out := make([]byte, (len(vals)*width+7)/8)
	bit := 0
	for _, v := range vals {
		for k := width - 1; k >= 0; k-- {
			if v>>k&1 == 1 {
				out[bit/8] |= 0x80 >> (bit % 8)
			}
			bit++
		}
	}
	return out
}

// elemBytes encodes v as one element of type ty.
func elemBytes(ty graph.ElementType, v int64) []byte {
	switch ty {
	case graph.Bool, graph.Int8:
		return []byte{byte(v)}
	case graph.Int16:
		return binary.LittleEndian.AppendUint16(nil, uint16(v))
	case graph.Int32:
		return binary.LittleEndian.AppendUint32(nil, uint32(v))
	case graph.Float32:
		return binary.LittleEndian.AppendUint32(nil, math.Float32bits(float32(v)/8))
	case graph.Int64:
		return binary.LittleEndian.AppendUint64(nil, uint64(v))
	}
	panic("elemBytes: " + ty.String()) // the variants below use only these
}

// bytesConst adds a constant UINT8 tensor holding data.
func (b *opModel) bytesConst(data []byte) graph.TensorID {
	id := b.tensor(graph.Uint8, nil, int32(len(data)))
	b.sg().Tensors[id].Buffer = graph.BufferIndex(len(b.m.Buffers))
	b.m.Buffers = append(b.m.Buffers, graph.Buffer{Data: data})
	return id
}

// decodePair is one input pair of a TFLM_DECODE and its output.
type decodePair struct {
	data, dcm []byte
	out       graph.TensorID
	want      []byte // the decoded output
}

// lutPair encodes a LUT-compressed output of type ty and shape, with
// bit width width, channels value tables along quantized dimension dim
// (none when channels is 0: no quantization).
func (b *opModel) lutPair(ty graph.ElementType, width, channels int, dim int32, shape ...int32) decodePair {
	var qu *graph.Quantization
	n := 1
	for _, d := range shape {
		n *= int(d)
	}
	if channels > 0 {
		qu = qc(channels, dim)
		if ty == graph.Int8 || ty == graph.Int16 {
			for i := range qu.ZeroPoint {
				qu.ZeroPoint[i] = 0
			}
		}
	}
	out := b.tensor(ty, qu, shape...)
	nch := max(channels, 1)
	stride := 1 << width
	table := make([]int64, nch*stride)
	for i := range table {
		table[i] = int64(b.r.Intn(200) - 100)
	}
	alt := channels > 1 && int(dim) == len(shape)-1
	idx := make([]int, n)
	var want []byte
	for j := range idx {
		idx[j] = b.r.Intn(stride)
		c := j / (n / nch) // channel first
		if alt {
			c = j % nch
		}
		want = append(want, elemBytes(ty, table[c*stride+idx[j]])...)
	}
	d := dcmHeader(0, byte(width), byte(stride)) // decode_state_lut.h: 5 bit width, 6 value table channel stride
	for _, v := range table {
		d = append(d, elemBytes(ty, v)...)
	}
	return decodePair{data: packMSB(idx, width), dcm: d, out: out, want: want}
}

// prunePair encodes a pruned output: a bit per element (set: the next
// value of the table, clear: the channel's zero point), per channel along
// dimension 0 with zero points zps (one channel, unquantized, when zps is
// nil).
func (b *opModel) prunePair(ty graph.ElementType, zps []int64, shape ...int32) decodePair {
	var qu *graph.Quantization
	if zps != nil {
		qu = qc(len(zps), 0)
		qu.ZeroPoint = zps
	}
	out := b.tensor(ty, qu, shape...)
	n := 1
	for _, d := range shape {
		n *= int(d)
	}
	nch := max(len(zps), 1)
	mask := make([]int, n)
	d := dcmHeader(2, 0, 0)
	var want []byte
	// decode_state_prune.cc Decode: FLOAT32 is copied as int32, BOOL as
	// int8.
	raw := ty
	if ty == graph.Float32 {
		raw = graph.Int32
	}
	for j := range mask {
		zp := int64(0)
		if zps != nil {
			zp = zps[j/(n/nch)]
		}
		if b.r.Intn(3) == 0 {
			want = append(want, elemBytes(raw, zp)...)
			continue
		}
		mask[j] = 1
		v := int64(b.r.Intn(250) - 125)
		if ty == graph.Bool {
			v = 1
		}
		want = append(want, elemBytes(raw, v)...)
		d = append(d, elemBytes(raw, v)...)
	}
	return decodePair{data: packMSB(mask, 1), dcm: d, out: out, want: want}
}

// huffmanPair encodes a Huffman-coded output (INT8 or INT16) with the
// prefix code 0, 10, 110, 111 and a one-level table of 8 elements
// (decode_state_huffman.h: DCM byte 5 holds log2(8)-1 in its high
// nibble and 1 for 32-bit elements; an element has the symbol-found bit,
// the bits its code uses, and the value), 32-bit elements unless table16.
func (b *opModel) huffmanPair(ty graph.ElementType, table16 bool, shape ...int32) decodePair {
	out := b.tensor(ty, q(0.05, 0), shape...)
	n := 1
	for _, d := range shape {
		n *= int(d)
	}
	symbols := []int64{-3, 7, 100, -128}
	if ty == graph.Int16 {
		symbols = []int64{-300, 7, 1000, -32768}
	}
	codes := []struct{ bits, len int }{{0b0, 1}, {0b10, 2}, {0b110, 3}, {0b111, 3}}
	sizeByte := byte(2 << 4)
	if !table16 {
		sizeByte |= 1
	}
	d := dcmHeader(1, sizeByte, 0)
	for e := range 8 {
		sym := 0
		switch {
		case e >= 7:
			sym = 3
		case e >= 6:
			sym = 2
		case e >= 4:
			sym = 1
		}
		used := codes[sym].len
		if table16 {
			d = binary.LittleEndian.AppendUint16(d, 0x8000|uint16(used)<<11|uint16(symbols[sym])&0x07ff)
		} else {
			d = binary.LittleEndian.AppendUint32(d, 0x80000000|uint32(used)<<27|uint32(symbols[sym])&0x07ffffff)
		}
	}
	var bits []int
	var want []byte
	for range n {
		s := b.r.Intn(4)
		for k := codes[s].len - 1; k >= 0; k-- {
			bits = append(bits, codes[s].bits>>k&1)
		}
		want = append(want, elemBytes(ty, symbols[s])...)
	}
	data := packMSB(bits, 1)
	// Whole 32-bit words, big-endian, and one more: the decoder reads
	// three bits at a time and may look into the next word at the end.
	data = append(data, make([]byte, (4-len(data)%4)%4+4)...)
	return decodePair{data: data, dcm: d, out: out, want: want}
}

// decode adds a TFLM_DECODE of the pairs, its outputs the graph's.
func (b *opModel) decode(pairs ...decodePair) {
	var ins, outs []graph.TensorID
	for _, p := range pairs {
		ins = append(ins, b.bytesConst(p.data), b.bytesConst(p.dcm))
		outs = append(outs, p.out)
	}
	b.custom("TFLM_DECODE", ins, outs)
	b.io(nil, outs)
}

// decodeVariant is a TFLM_DECODE model and the digests of its outputs
// (FNV-1a-64, as the runners print them).
type decodeVariant struct {
	name string
	m    *graph.Model
	want []string
}

func newDecodeVariant(name string, build func(b *opModel) []decodePair) decodeVariant {
	b := newOpModel(7)
	pairs := build(b)
	b.decode(pairs...)
	v := decodeVariant{name: name, m: b.m}
	for _, p := range pairs {
		h := fnv.New64a()
		h.Write(p.want)
		v.want = append(v.want, fmt.Sprintf("%016x", h.Sum64()))
	}
	return v
}

// wrong says how the outputs of a run (runOracle's lines) differ from
// the values v encoded, "" when they do not.
func (v decodeVariant) wrong(o map[string]string) string {
	for i, want := range v.want {
		got, _, _ := strings.Cut(o[fmt.Sprintf("output.0.%d", i)], " ")
		if got != want {
			return fmt.Sprintf("output %d digest %q, the encoded values' %s", i, got, want)
		}
	}
	return ""
}

// decodes runs model file on tool with an arena of n bytes: whether it
// ran, and whether it decoded v's values.
func (v decodeVariant) decodes(tool, file string, n int64) (runs, right bool) {
	at, o := runOracle(context.Background(), tool, file, n, time.Minute)
	return at == ran, at == ran && v.wrong(o) == ""
}

// decodeVariants cover each decode type and the allocations that differ:
// LUT on INT8 (the 4-, 3- and 2-bit fast paths, per channel), FLOAT32,
// INT16 along the last axis, INT32, INT64 and BOOL; Prune per tensor,
// per channel with zero points (a persistent copy of them) and on
// FLOAT32; Huffman with 16- and 32-bit tables; and one operator with
// three pairs (an array of three DecodeState pointers, three states).
func decodeVariants() []decodeVariant {
	f32, i8, i16, i32, i64 := graph.Float32, graph.Int8, graph.Int16, graph.Int32, graph.Int64
	one := func(name string, p func(b *opModel) decodePair) decodeVariant {
		return newDecodeVariant(name, func(b *opModel) []decodePair { return []decodePair{p(b)} })
	}
	return []decodeVariant{
		one("lut_INT8_w4", func(b *opModel) decodePair { return b.lutPair(i8, 4, 1, 0, 8, 40) }),
		one("lut_INT8_w3_channels", func(b *opModel) decodePair { return b.lutPair(i8, 3, 4, 0, 4, 70) }),
		one("lut_INT8_w2", func(b *opModel) decodePair { return b.lutPair(i8, 2, 0, 0, 3, 33) }),
		one("lut_FLOAT32_w5", func(b *opModel) decodePair { return b.lutPair(f32, 5, 0, 0, 2, 3, 7) }),
		one("lut_INT16_w6_last_axis", func(b *opModel) decodePair { return b.lutPair(i16, 6, 5, 1, 6, 5) }),
		one("lut_INT32_w7", func(b *opModel) decodePair { return b.lutPair(i32, 7, 0, 0, 50) }),
		one("lut_INT64_w1", func(b *opModel) decodePair { return b.lutPair(i64, 1, 0, 0, 4, 4) }),
		one("lut_BOOL_w1", func(b *opModel) decodePair {
			p := b.lutPair(graph.Bool, 1, 0, 0, 20)
			// The values 0 and 1 only.
			for i := range p.want {
				p.want[i] &= 1
			}
			for i := 16; i < len(p.dcm); i++ {
				p.dcm[i] &= 1
			}
			return p
		}),
		one("prune_INT8", func(b *opModel) decodePair { return b.prunePair(i8, []int64{-4}, 5, 9) }),
		one("prune_INT8_zero_points", func(b *opModel) decodePair { return b.prunePair(i8, []int64{1, -2, 0, 5, 9}, 5, 12) }),
		one("prune_FLOAT32", func(b *opModel) decodePair { return b.prunePair(f32, nil, 3, 11) }),
		one("prune_INT16", func(b *opModel) decodePair { return b.prunePair(i16, nil, 37) }),
		one("huffman_INT8_table16", func(b *opModel) decodePair { return b.huffmanPair(i8, true, 4, 25) }),
		one("huffman_INT8_table32", func(b *opModel) decodePair { return b.huffmanPair(i8, false, 33) }),
		one("huffman_INT16_table32", func(b *opModel) decodePair { return b.huffmanPair(i16, false, 3, 19) }),
		newDecodeVariant("three_pairs", func(b *opModel) []decodePair {
			return []decodePair{b.lutPair(i8, 4, 2, 0, 2, 48), b.prunePair(i8, []int64{3, 0, -1}, 3, 10), b.huffmanPair(i16, false, 21)}
		}),
	}
}

// decodeRefused are TFLM_DECODE models TFLM cannot run, and the step of
// TFLM that fails: "prepare" (AllocateTensors) or "invoke".
func decodeRefused() []struct {
	v    decodeVariant
	when string
} {
	var out []struct {
		v    decodeVariant
		when string
	}
	add := func(name, when string, build func(b *opModel) decodePair) {
		v := newDecodeVariant(name, func(b *opModel) []decodePair { return []decodePair{build(b)} })
		out = append(out, struct {
			v    decodeVariant
			when string
		}{v, when})
	}
	lut := func(edit func(p *decodePair, b *opModel)) func(b *opModel) decodePair {
		return func(b *opModel) decodePair {
			p := b.lutPair(graph.Int8, 4, 1, 0, 8, 8)
			edit(&p, b)
			return p
		}
	}
	add("custom_type", "prepare", lut(func(p *decodePair, _ *opModel) { p.dcm[0] = 127 }))
	add("dcm_version_2", "prepare", lut(func(p *decodePair, _ *opModel) { p.dcm[1] = 2 }))
	add("lut_version_2", "prepare", lut(func(p *decodePair, _ *opModel) { p.dcm[4] = 2 }))
	add("lut_UINT8", "invoke", lut(func(p *decodePair, b *opModel) { b.sg().Tensors[p.out].Type = graph.Uint8 }))
	add("huffman_table16_INT16", "prepare", func(b *opModel) decodePair { return b.huffmanPair(graph.Int16, true, 8) })
	add("prune_INT16_zero_point", "prepare", func(b *opModel) decodePair { return b.prunePair(graph.Int16, []int64{3}, 8) })
	return out
}

// decodeM55Sample are the variants TestTFLMArenaDecode runs on
// tflm_run_m55 in make test; HELIAC_OP_SWEEP=1 runs every one.
var decodeM55Sample = map[string]bool{"lut_INT8_w4": true, "three_pairs": true}

// TestTFLMArenaDecode proves TFLM_DECODE's arena data
// (kernels/tflmtail_decode.go) one operator at a time: each variant's
// model, emitted by heliac (--emit-tflite --kernels tflm-reference), runs
// on tflm_run with heliac's host64 figure N and fails at N-16, TFLM's
// head and tail are heliac's, and its outputs are the values the variant
// encoded (so the original's too). On tflm_run_m55 it checks
// decodeM55Sample, or every variant with HELIAC_OP_SWEEP=1. The refused
// variants get no figure, with the reason, and TFLM refuses them too.
func TestTFLMArenaDecode(t *testing.T) {
	skipUnderRace(t)
	if testing.Short() {
		t.Skip("runs TFLM; skipped with -short")
	}
	tflmrun.Require(t)
	sweep := os.Getenv(envOpSweep) != ""
	runners := opRunners
	dir := t.TempDir()
	for _, r := range runners {
		tool := runnerTool(r.name, r.qemu)
		if tool == "" {
			t.Logf("%s (or qemu-system-arm) not found: not checked", r.name)
			continue
		}
		for _, v := range decodeVariants() {
			if r.qemu && !sweep && !decodeM55Sample[v.name] {
				continue
			}
			t.Run(r.name+"/"+v.name, func(t *testing.T) {
				data, err := tflite.Encode(v.m, tflite.EncodeOptions{})
				require.NoError(t, err)
				orig := filepath.Join(dir, r.name+"_orig_"+v.name+".tflite")
				require.NoError(t, os.WriteFile(orig, data, 0o644))
				file, a, err := shapeCompile(dir, r, data, v.name)
				require.NoError(t, err)
				c := arenaCheck{model: v.name, what: "emitted", file: file, tool: tool, qemu: r.qemu, a: a}
				msg, o := c.run()
				if msg == fmt.Sprintf("arena %d-16 runs too", a.Bytes) {
					// Below heliac's figure the DecodeState (a persistent
					// buffer the constructor writes) lands on the live
					// temporary TfLiteTensors of the pair (tflmarena keeps
					// it above them). Where it overwrites only fields
					// Setup does not read again (the output's type on
					// host64) TFLM still decodes right; elsewhere it runs
					// and decodes wrong (Prune's zero points), or fails.
					// 32 bytes below, it must not decode right.
					_, right := v.decodes(tool, file, a.Bytes-16)
					t.Logf("%s on %s: arena %d-16 runs too, decoding %s (the DecodeState over the pair's temporaries)",
						v.name, r.name, a.Bytes, map[bool]string{true: "right", false: "WRONG"}[right])
					msg = ""
					if runs, right := v.decodes(tool, file, a.Bytes-32); runs && right {
						msg = fmt.Sprintf("arena %d-32 runs and decodes right", a.Bytes)
					}
				}
				if msg != "" {
					t.Errorf("%s on %s: %s", v.name, r.name, msg)
					return
				}
				if why := v.wrong(o); why != "" {
					t.Errorf("%s on %s: %s", v.name, r.name, why)
				}
				t.Logf("%s on %s: heliac's figure %d bytes runs, head %d, tail %d, decoding right", v.name, r.name, a.Bytes, a.Head, a.Tail)
			})
		}
		if r.qemu {
			continue
		}
		for _, rv := range decodeRefused() {
			v := rv.v
			t.Run(r.name+"/refused/"+v.name, func(t *testing.T) {
				data, err := tflite.Encode(v.m, tflite.EncodeOptions{})
				require.NoError(t, err)
				_, _, err = shapeCompile(dir, r, data, v.name)
				require.Error(t, err)
				require.Contains(t, err.Error(), "TFLM cannot run it")
				orig := filepath.Join(dir, "refused_"+v.name+".tflite")
				require.NoError(t, os.WriteFile(orig, data, 0o644))
				_, o := runOracle(context.Background(), tool, orig, 1<<20, time.Minute)
				if rv.when == "prepare" {
					require.Equal(t, "error", o["status"], "TFLM allocates it: %v", o)
					require.Contains(t, o["error"], "failed to prepare")
				} else {
					require.Equal(t, "ok", o["status"], "TFLM does not allocate it: %v", o)
					require.True(t, strings.HasPrefix(o["invoke.0"], "error"), "TFLM invokes it: %v", o)
				}
				t.Logf("%s: heliac: %v; TFLM: %s%s", v.name, err, o["error"], o["invoke.0"])
			})
		}
	}
}
