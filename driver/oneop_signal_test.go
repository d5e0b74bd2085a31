package driver_test

import (
	"encoding/binary"

	"github.com/heliac/heliac/graph"
	"github.com/heliac/heliac/internal/flexbuf"
)

// signalVariants are one-operator models of the signal library's custom
// operators that shapeVariants leaves out (the corpus's audio
// preprocessors run them all; signal/micro/kernels @90b983c for each
// kernel's Init and Prepare, signal/tensorflow_core/ops for their
// options). Every output element is written, so the outputs do not
// depend on the arena's contents (SignalEnergy writes only its
// [start_index, end_index)).
func signalVariants() []opVariant {
	var out []opVariant
	variant := func(name string, add func(b *opModel)) { out = append(out, opVariant{name, add}) }
	i16, i32, u32, u64, f32 := graph.Int16, graph.Int32, graph.Uint32, graph.Uint64, graph.Float32
	variant("signal_energy", func(b *opModel) {
		x := b.tensor(i16, nil, 2*9) // 9 complex values
		o := b.tensor(u32, nil, 9)
		b.custom("SignalEnergy", []graph.TensorID{x}, []graph.TensorID{o},
			flexbuf.Entry{Key: "end_index", Value: 9}, flexbuf.Entry{Key: "start_index", Value: 0})
		b.io([]graph.TensorID{x}, []graph.TensorID{o})
	})
	variant("signal_fft_auto_scale", func(b *opModel) {
		x := b.tensor(i16, nil, 32)
		o := b.tensor(i16, nil, 32)
		s := b.tensor(i32, nil)
		b.custom("SignalFftAutoScale", []graph.TensorID{x}, []graph.TensorID{o, s})
		b.io([]graph.TensorID{x}, []graph.TensorID{o, s})
	})
	variant("signal_filter_bank", func(b *opModel) {
		// Three channels over 12 frequencies, channel i from frequency 3i
		// (filter_bank.cc FilterbankAccumulateChannels reads channel
		// num_channels+1 entries of each table).
		x := b.tensor(u32, nil, 12)
		w := b.int16s(12, 0, 4096)
		uw := b.int16s(12, 0, 4096)
		starts := b.int16Values(0, 3, 6, 9)
		widths := b.int16Values(3, 3, 3, 3)
		o := b.tensor(u64, nil, 3)
		b.custom("SignalFilterBank", []graph.TensorID{x, w, uw, starts, b.int16Values(0, 3, 6, 9), widths}, []graph.TensorID{o},
			flexbuf.Entry{Key: "num_channels", Value: 3})
		b.io([]graph.TensorID{x}, []graph.TensorID{o})
	})
	variant("signal_filter_bank_log", func(b *opModel) {
		x := b.tensor(u32, nil, 8)
		o := b.tensor(i16, nil, 8)
		b.custom("SignalFilterBankLog", []graph.TensorID{x}, []graph.TensorID{o},
			flexbuf.Entry{Key: "input_correction_bits", Value: 3}, flexbuf.Entry{Key: "output_scale", Value: 1600})
		b.io([]graph.TensorID{x}, []graph.TensorID{o})
	})
	variant("signal_filter_bank_spectral_subtraction", func(b *opModel) {
		// Its noise estimate is state (Reset clears it).
		x := b.tensor(u32, nil, 8)
		o := b.tensor(u32, nil, 8)
		noise := b.tensor(u32, nil, 8)
		b.custom("SignalFilterBankSpectralSubtraction", []graph.TensorID{x}, []graph.TensorID{o, noise},
			flexbuf.Entry{Key: "alternate_one_minus_smoothing", Value: 15729}, flexbuf.Entry{Key: "alternate_smoothing", Value: 655},
			flexbuf.Entry{Key: "clamping", Value: false}, flexbuf.Entry{Key: "min_signal_remaining", Value: 819},
			flexbuf.Entry{Key: "num_channels", Value: 8}, flexbuf.Entry{Key: "one_minus_smoothing", Value: 15729},
			flexbuf.Entry{Key: "smoothing", Value: 655}, flexbuf.Entry{Key: "smoothing_bits", Value: 10},
			flexbuf.Entry{Key: "spectral_subtraction_bits", Value: 14})
		b.io([]graph.TensorID{x}, []graph.TensorID{o, noise})
	})
	variant("signal_filter_bank_square_root", func(b *opModel) {
		x := b.tensor(u64, nil, 8)
		o := b.tensor(u32, nil, 8)
		b.custom("SignalFilterBankSquareRoot", []graph.TensorID{x, b.ints(i32, nil, 7)}, []graph.TensorID{o})
		b.io([]graph.TensorID{x}, []graph.TensorID{o})
	})
	variant("signal_pcan", func(b *opModel) {
		// pcan_argc_fixed.cc WideDynamicFunction reads the gain table up
		// to entry 4*32-6+2: 125 entries.
		x := b.tensor(u32, nil, 8)
		noise := b.tensor(u32, nil, 8)
		o := b.tensor(u32, nil, 8)
		b.custom("SignalPCAN", []graph.TensorID{x, noise, b.int16s(125, 0, 2048)}, []graph.TensorID{o},
			flexbuf.Entry{Key: "snr_shift", Value: 6})
		b.io([]graph.TensorID{x, noise}, []graph.TensorID{o})
	})
	for _, ty := range []graph.ElementType{i16, i32, f32} {
		variant("signal_rfft_"+ty.String(), func(b *opModel) {
			// 12 samples, zero-padded to 16, give 9 complex values.
			x := b.tensor(ty, nil, 2, 12)
			o := b.tensor(ty, nil, 2, 18)
			b.custom("SignalRfft", []graph.TensorID{x}, []graph.TensorID{o},
				flexbuf.Entry{Key: "T", Value: int(ty)}, flexbuf.Entry{Key: "fft_length", Value: 16})
			b.io([]graph.TensorID{x}, []graph.TensorID{o})
		})
	}
	variant("signal_window", func(b *opModel) {
		x := b.tensor(i16, nil, 2, 16)
		o := b.tensor(i16, nil, 2, 16)
		b.custom("SignalWindow", []graph.TensorID{x, b.int16s(16, 0, 16384)}, []graph.TensorID{o},
			flexbuf.Entry{Key: "shift", Value: 12})
		b.io([]graph.TensorID{x}, []graph.TensorID{o})
	})
	return out
}

// int16s adds a constant INT16 vector of n values in [lo, hi).
func (b *opModel) int16s(n int, lo, hi int) graph.TensorID {
	vals := make([]int, n)
	for i := range vals {
		vals[i] = lo + b.r.Intn(hi-lo)
	}
	return b.int16Values(vals...)
}

// int16Values adds a constant INT16 vector holding vals.
func (b *opModel) int16Values(vals ...int) graph.TensorID {
	id := b.constant(graph.Int16, nil, int32(len(vals)))
	data := b.m.Buffers[b.sg().Tensors[id].Buffer].Data
	for i, v := range vals {
		binary.LittleEndian.PutUint16(data[2*i:], uint16(int16(v)))
	}
	return id
}
