package kernels

import "github.com/heliac/heliac/graph"

// CONV_2D under TFLM's cmsis_nn kernel. For INT8 and INT16 activations,
// conv.cc's Eval hands the operator's own input and output buffers to
// CMSIS-NN's arm_convolve_wrapper_s8 (INT8 filters), _s4 (packed INT4
// filters) or _s16, which choose a function by the shapes, and each
// function's loops differ by code path (ARM_MATH_MVEI, ARM_MATH_DSP,
// neither; TFLM builds with GCC, so the __ARMCC_VERSION-only loops are
// not built). Every one reads its input and writes its output through
// int8_t or int16_t pointers without restrict (arm_memcpy_s8's restrict
// pointers copy the input into the kernel's scratch buffer, which never
// overlaps it), so the compiler keeps the source's order of reads and
// writes, and each computes whole output pixels from whole rows of input:
// its order is a pixelSchedule over the output's pixels, and its window
// schedulePlacement's. Three families of writes:
//
//   - im2col (arm_convolve_s8, _s4, _even_s4, _s16, and 1xN off MVE):
//     the windows of 4 pixels (MVE) or 2 (otherwise) are copied into the
//     scratch buffer, then those pixels are computed from the copy and
//     written: columns(4) or columns(2), restarting at each batch.
//   - a matrix product on the input itself (1x1 convolutions; 1xN's
//     unpadded pixels on MVE): on MVE rows of 4 pixels (3 and 2 too for
//     INT4) are read once per output channel and that channel is written
//     to all of them before the next reads them again, and a lone row is
//     written 4 channels at a time as they are computed (mveProduct);
//     without MVE the product runs over output channels outermost, every
//     row read again for each pair of channels (INT8) or group of four
//     (INT4), so every pass but the last writes while the product's first
//     row is still to be read (dspProduct, dspProductS4).
//   - 1xN on MVE: per batch, the left-padded pixels from an im2col copy
//     (INT4: each from the input), the unpadded ones by a product on the
//     input, the right-padded ones from a copy (INT4: from the input)
//     (mve1xNOrder).
//
// Where no order is given the kernel has no contract, for the reason its
// rule gives: a grouped convolution (arm_convolve_s8 sweeps the whole
// output once per group; _s4 and _s16 do not support groups), a 1x1
// stride-1 convolution whose product makes several passes over the whole
// image without MVE, and shapes for which CMSIS-NN's 1xN kernel fails or
// computes from input it should not read (cmsisConv1xN).

// Where CMSIS-NN's convolution sources are, at the commit TFLM pins.
const (
	cmsisConvFns     = "CMSIS-NN@4ab83cc: Source/ConvolutionFunctions/"
	cmsisConvSupport = "Source/NNSupportFunctions/"
)

// convKernel is the CMSIS-NN function arm_convolve_wrapper_s8/_s4/_s16
// runs for an operator.
type convKernel uint8

const (
	convIm2col     convKernel = iota + 1 // arm_convolve_s8, _s4, _s16
	conv1x1Fast                          // arm_convolve_1x1_s8_fast, _s4_fast
	conv1x1Strided                       // arm_convolve_1x1_s8, _s4
	conv1xN                              // arm_convolve_1_x_n_s8, _s4 (on MVE)
	convEvenS4                           // arm_convolve_even_s4 (MVE)
)

// convFamily is the wrapper: by activation and filter type.
type convFamily uint8

const (
	convS8  convFamily = iota + 1 // INT8 activations, INT8 filter
	convS4                        // INT8 activations, packed INT4 filter
	convS16                       // INT16 activations, INT8 filter
)

// convCase is an operator as CMSIS-NN's wrapper sees it.
type convCase struct {
	w       *slidingWindow
	family  convFamily
	kernel  convKernel
	grouped bool // input channels other than the filter's
}

// cmsisConvCase reads which CMSIS-NN function TFLM's cmsis_nn CONV_2D runs
// for an operator on path isa, and false for the types it hands to the
// reference kernel (FLOAT32; its rule is cmsisContracts') or refuses.
// The wrappers' conditions (arm_convolve_wrapper_s8.c 63-122,
// arm_convolve_wrapper_s4.c 63-138, arm_convolve_wrapper_s16.c 62-72)
// read TFLM's padding (conv.cc 261-262, the reference's), which
// slidingWindow computes: arm_nn_is_convolve_1x1 (no padding, a 1x1
// filter, unit dilation, the filter's channels the input's), _1x1_fast
// (unit strides) and arm_nn_is_convolve_1_x_n (one input row, a one-row
// filter, unit horizontal dilation, stride.w × channels a multiple of 4,
// the filter's channels the input's) (Include/arm_nnsupportfunctions.h
// 125-159).
func cmsisConvCase(c placeCtx) (*convCase, bool) {
	if c.op.Code != graph.Conv2D || c.in.Type != c.out.Type || len(c.op.Inputs) < 2 {
		return nil, false
	}
	f := operand(c.sg, c.op.Inputs, 1)
	if f == nil {
		return nil, false
	}
	k := &convCase{}
	switch {
	case c.in.Type == graph.Int8 && f.Type == graph.Int8:
		k.family = convS8
	case c.in.Type == graph.Int8 && f.Type == graph.Int4:
		k.family = convS4
	case c.in.Type == graph.Int16 && f.Type == graph.Int8:
		k.family = convS16
	default:
		return nil, false
	}
	w, ok := newSlidingWindow(c.m, c.sg, c.op, c.in, c.out)
	if !ok {
		return nil, false
	}
	k.w = w
	k.grouped = int64(f.Shape[3]) != w.inC
	switch {
	case k.family == convS16:
		k.kernel = convIm2col
	case w.padH == 0 && w.padW == 0 && w.filterH == 1 && w.filterW == 1 && w.dilationH == 1 && w.dilationW == 1 && !k.grouped:
		k.kernel = conv1x1Strided
		if w.strideH == 1 && w.strideW == 1 {
			k.kernel = conv1x1Fast
		}
	case w.inH == 1 && w.dilationW == 1 && w.filterH == 1 && (w.strideW*w.inC)%4 == 0 && !k.grouped:
		k.kernel = conv1xN
	case k.family == convS4 && c.isa == MVE && (w.filterH*w.filterW*w.inC)%2 == 0:
		k.kernel = convEvenS4
	default:
		k.kernel = convIm2col
	}
	return k, true
}

// convRule is one CMSIS-NN function's contract on one code path: the
// order it writes in for a case (ok false: no contract), and where it was
// read.
type convRule struct {
	family convFamily
	kernel convKernel
	order  func(k *convCase, isa ISA) (pixelSchedule, bool)
	source string
}

// cmsisConvContracts registers, on l, CONV_2D's contracts where TFLM's
// cmsis_nn kernel runs CMSIS-NN's own functions on l.isa's code path: one
// rule per function, each applying only to the operators the wrapper
// hands that function.
func cmsisConvContracts(l *Library) {
	for _, r := range cmsisConvRules(l.isa) {
		l.addRule(Contract{Op: graph.Conv2D, Name: "CONV_2D", Input: 0, Output: 0, Overlap: Sweep,
			Source: tflmCommit + ": " + cmsisDir + "conv.cc Eval (INT8 with INT8 or INT4 filters, lines 446-460; INT16, " +
				"lines 464-477) and EvalQuantizedPerChannel (lines 244-323: convolve_wrapper, lines 193-242, on the " +
				"tensors' own data); " + cmsisConvFns + r.source},
			func(c placeCtx) (int64, int64, bool) {
				k, ok := cmsisConvCase(c)
				if !ok || k.family != r.family || k.kernel != r.kernel {
					return 0, 0, false
				}
				order, ok := r.order(k, c.isa)
				if !ok {
					return 0, 0, false
				}
				return schedulePlacement(k.w, order)
			})
	}
}

// cmsisConvRules are the rules of path isa. Line numbers are CMSIS-NN's
// at the commit TFLM pins.
func cmsisConvRules(isa ISA) []convRule {
	s8Product := productSource(isa, false)
	s4Product := productSource(isa, true)
	var rules []convRule
	// 1x1, unit strides: one product over every pixel of every batch
	// (batches are contiguous). Without MVE each pass over the channels
	// reads every pixel again from the first, so with more than one pass
	// only the output's last pixel could lie on the input: no contract.
	rules = append(rules, convRule{convS8, conv1x1Fast, func(k *convCase, isa ISA) (pixelSchedule, bool) {
		return wholeProduct(k, isa, false)
	}, "arm_convolve_wrapper_s8.c arm_convolve_wrapper_s8 (lines 63-78) -> arm_convolve_1x1_s8_fast.c " +
		"arm_convolve_1x1_s8_fast (with GCC lines 176-190: one arm_nn_mat_mult_nt_t_s8 over the n·h·w pixels, " +
		"line 72; the buffered loop of lines 74-171 is Arm Compiler 6's) -> " + s8Product})
	rules = append(rules, convRule{convS4, conv1x1Fast, func(k *convCase, isa ISA) (pixelSchedule, bool) {
		return wholeProduct(k, isa, true)
	}, "arm_convolve_wrapper_s4.c arm_convolve_wrapper_s4 (lines 63-78) -> arm_convolve_1x1_s4_fast.c " +
		"arm_convolve_1x1_s4_fast (lines 72-89: one arm_nn_mat_mult_nt_t_s4 over the n·h·w pixels) -> " + s4Product})
	// 1x1 with strides: one product per output row.
	rules = append(rules, convRule{convS8, conv1x1Strided, func(k *convCase, isa ISA) (pixelSchedule, bool) {
		return rowProducts(k, isa, false), true
	}, "arm_convolve_wrapper_s8.c arm_convolve_wrapper_s8 (lines 79-92) -> arm_convolve_1x1_s8.c arm_convolve_1x1_s8 " +
		"(lines 80-108: per batch and output row one arm_nn_mat_mult_nt_t_s8 over the row's pixels, " +
		"stride.w·channels apart, lines 86-100) -> " + s8Product})
	rules = append(rules, convRule{convS4, conv1x1Strided, func(k *convCase, isa ISA) (pixelSchedule, bool) {
		return rowProducts(k, isa, true), true
	}, "arm_convolve_wrapper_s4.c arm_convolve_wrapper_s4 (lines 79-92) -> arm_convolve_1x1_s4.c arm_convolve_1x1_s4 " +
		"(lines 80-107: per batch and output row one arm_nn_mat_mult_nt_t_s4 over the row's pixels, lines 86-99) -> " + s4Product})
	// The general kernels, and 1xN where it is one of them.
	im2colS8 := "arm_convolve_wrapper_s8.c arm_convolve_wrapper_s8 (lines 108-122) -> arm_convolve_s8.c arm_convolve_s8 " +
		"(one group: with more, the loop of line 142 sweeps the whole output once per group, no contract) "
	im2colS4 := "arm_convolve_wrapper_s4.c arm_convolve_wrapper_s4 (lines 124-137) -> arm_convolve_s4.c arm_convolve_s4 " +
		"(no groups: it reads every input channel for every output channel; grouped, no contract) "
	if isa == MVE {
		im2colS8 += "(ARM_MATH_MVEI: the windows of 4 pixels copied into the buffer by arm_memcpy_s8, lines 189-209, " +
			"then arm_nn_mat_mult_nt_t_s8 on the buffer writes those 4, lines 212-238; the rest of a batch at lines 301-322)"
		im2colS4 += "(ARM_MATH_MVEI: the windows of 4 pixels copied by arm_memcpy_s8, lines 113-130, then " +
			"arm_nn_mat_mult_nt_t_s4 on the buffer writes those 4, lines 134-154; the rest of a batch at lines 159-178)"
	} else {
		im2colS8 += "(without MVE: the windows of 2 pixels copied by arm_memcpy_s8, lines 189-209, and widened " +
			"into the buffer, lines 240-250, then arm_nn_mat_mult_kernel_s8_s16 on the buffer writes both, lines 252-290; " +
			"the one left of a batch at lines 323-381); also 1xN: arm_convolve_1_x_n_s8.c runs arm_convolve_s8 without MVE, lines 213-226"
		im2colS4 += "(without MVE: the windows of 2 pixels widened into the buffer by arm_q7_to_q15_with_offset, lines " +
			"192-212, then arm_nn_mat_mult_kernel_s4_s16 on the buffer writes both, lines 215-232; the one left of a batch at " +
			"lines 242-317); also 1xN: arm_convolve_1_x_n_s4.c runs arm_convolve_s4 without MVE, lines 178-190"
	}
	rules = append(rules, convRule{convS8, convIm2col, im2colOrder, im2colS8})
	rules = append(rules, convRule{convS4, convIm2col, im2colOrder, im2colS4})
	s16 := "arm_convolve_wrapper_s16.c arm_convolve_wrapper_s16 (lines 62-72: always arm_convolve_s16) -> arm_convolve_s16.c " +
		"arm_convolve_s16 (no groups: it reads every input channel for every output channel; grouped, no contract; " +
		"the windows copied by arm_memcpy_s8, lines 112-132, "
	if isa == MVE {
		s16 += "4 pixels at a time, then arm_nn_mat_mult_nt_t_s16 on the buffer writes those 4, lines 135-154; the rest of a " +
			"batch at lines 186-200)"
	} else {
		s16 += "2 pixels at a time, then arm_nn_mat_mult_kernel_s16 on the buffer writes both, lines 155-174; the one left " +
			"of a batch at lines 201-277)"
	}
	rules = append(rules, convRule{convS16, convIm2col, im2colOrder, s16})
	if isa != MVE {
		// Off MVE, 1xN is the general kernel: cmsisConvCase's conv1xN
		// runs im2colOrder under the general rules' sources.
		rules = append(rules, convRule{convS8, conv1xN, im2colOrder, im2colS8},
			convRule{convS4, conv1xN, im2colOrder, im2colS4})
		return rules
	}
	rules = append(rules, convRule{convS8, conv1xN, mve1xNOrder(false), "arm_convolve_wrapper_s8.c arm_convolve_wrapper_s8 " +
		"(lines 94-107) -> arm_convolve_1_x_n_s8.c arm_convolve_1_x_n_s8 (ARM_MATH_MVEI, lines 69-212: per batch the left-padded " +
		"pixels from an im2col copy of the row's first pixels, lines 120-144, the unpadded ones by arm_nn_mat_mult_nt_t_s8 on the " +
		"input, lines 146-175, the right-padded ones from a copy, lines 177-208; arm_convolve_s8 when the counts do not add up, " +
		"lines 99-113; no contract where it fails, lines 83-86, or reads input it should not, cmsisConv1xN) -> " + s8Product})
	rules = append(rules, convRule{convS4, conv1xN, mve1xNOrder(true), "arm_convolve_wrapper_s4.c arm_convolve_wrapper_s4 " +
		"(lines 94-107) -> arm_convolve_1_x_n_s4.c arm_convolve_1_x_n_s4 (ARM_MATH_MVEI, lines 70-177: per batch each left-padded " +
		"pixel by arm_nn_mat_mul_core_1x_s4 on the input, lines 108-123, the unpadded ones by arm_nn_mat_mult_nt_t_s4 on the " +
		"input, lines 135-148, each right-padded one by arm_nn_mat_mul_core_1x_s4, lines 160-174; no contract where it fails, " +
		"lines 84-96, or reads input it should not, cmsisConv1xN) -> " + s4Product + "; " + cmsisConvSupport +
		"arm_nn_mat_mul_core_1x_s4.c arm_nn_mat_mul_core_1x_s4 (ARM_MATH_MVEI, lines 57-130: one row read once per output " +
		"channel, channels stored 4 at a time as they are computed (line 111), the last out_ch % 4 after (line 129))"})
	rules = append(rules, convRule{convS4, convEvenS4, im2colOrder, "arm_convolve_wrapper_s4.c arm_convolve_wrapper_s4 " +
		"(ARM_MATH_MVEI, filter h·w·channels even, lines 108-122) -> arm_convolve_even_s4.c arm_convolve_even_s4 (no groups, " +
		"as arm_convolve_s4; the windows of 4 pixels copied by arm_memcpy_s8, lines 122-139, and interleaved in the buffer, " +
		"lines 141-152, then arm_nn_mat_mult_nt_interleaved_t_even_s4 on the buffer writes those 4, lines 157-178; the rest of " +
		"a batch at lines 183-202)"})
	return rules
}

// productSource cites arm_nn_mat_mult_nt_t_s8 (s4 false) or _s4 on path
// isa, the product 1x1 and 1xN kernels run on their input.
func productSource(isa ISA, s4 bool) string {
	src := cmsisConvSupport + "arm_nn_mat_mult_nt_t_s8.c arm_nn_mat_mult_nt_t_s8 "
	if s4 {
		src = cmsisConvSupport + "arm_nn_mat_mult_nt_t_s4.c arm_nn_mat_mult_nt_t_s4 "
	}
	switch {
	case isa == MVE && !s4:
		return src + "(ARM_MATH_MVEI, lines 65-223: rows 4 at a time, lines 67-151, each output channel read from the 4 rows " +
			"(lines 96-128) and stored to the 4 pixels (line 146) before the next channel reads them again; a row left alone, " +
			"lines 153-223, channels stored 4 at a time as they are computed (line 207), the last rhs_rows % 4 after (line 220))"
	case isa == MVE:
		return src + "(ARM_MATH_MVEI, lines 63-499: rows 4 at a time, lines 71-177, then 3, lines 179-275, then 2, lines " +
			"277-388, each output channel read from the rows and stored to them (lines 172, 270, 383) before the next channel " +
			"reads them again; a row left alone, lines 390-498, channels stored 4 at a time as they are computed (line 483), " +
			"the last rhs_rows % 4 after (line 496))"
	case !s4 && isa == DSP:
		return src + "(ARM_MATH_DSP, lines 225-623: output channels 2 at a time, lines 230-581, each pair over every row from " +
			"the first (line 232), 2 rows at a time, lines 254-448, stored at lines 437-442, the odd row at lines 451-577; the " +
			"odd channel over every row, lines 583-623)"
	case !s4:
		return src + "(without DSP, lines 624-795: output channels 2 at a time, lines 626-752, each pair over every row from " +
			"the first (line 628), 2 rows at a time, lines 650-709, stored at lines 698-703, the odd row at lines 712-748; the " +
			"odd channel over every row, lines 754-794)"
	case isa == DSP:
		return src + "(ARM_MATH_DSP, lines 500-1562: output channels 4 at a time, lines 506-1224, each group over every row " +
			"from the first (line 509), 2 rows at a time: channels 0 and 2 stored at lines 749-753, then the rows read again " +
			"(from their second element when the column count is odd, lines 692-731) for channels 1 and 3, stored at lines " +
			"935-940; the odd row at lines 949-1220; the rhs_rows % 4 channels left one at a time over every row, lines 1229-1561)"
	}
	return src + "(without DSP, lines 1563-2049: output channels 4 at a time, lines 1567-1890, each group over every row " +
		"from the first (line 1569), 2 rows at a time: channels 0 and 2 stored at lines 1682-1686, then the rows read again " +
		"(from their second element when the column count is odd, lines 1625-1660) for channels 1 and 3, stored at lines " +
		"1751-1756; the odd row at lines 1763-1889; the rhs_rows % 4 channels left one at a time over every row, lines 1895-2048)"
}

// im2colOrder is the im2col kernels' order: columns(4) on MVE,
// columns(2) otherwise; none for a grouped convolution.
func im2colOrder(k *convCase, isa ISA) (pixelSchedule, bool) {
	if k.grouped {
		return nil, false
	}
	if isa == MVE {
		return columns(4), true
	}
	return columns(2), true
}

// wholeProduct is the 1x1 stride-1 order: one product over every pixel.
// Without MVE only a product of one pass (INT8: at most 2 output
// channels; INT4: 1 or 4) has a contract.
func wholeProduct(k *convCase, isa ISA, s4 bool) (pixelSchedule, bool) {
	c := k.w.outC
	switch {
	case isa == MVE:
	case !s4 && c > 2, s4 && c != 1 && c != 4:
		return nil, false
	}
	cols := k.w.inC
	return func(p *pixelOrder, write func(end, next int64)) {
		p.product(0, p.pixels, cols, isa, s4, write)
	}, true
}

// rowProducts is the strided 1x1 order: one product per output row.
func rowProducts(k *convCase, isa ISA, s4 bool) pixelSchedule {
	cols := k.w.inC
	return func(p *pixelOrder, write func(end, next int64)) {
		for a := int64(0); a < p.pixels; a += p.outW {
			p.product(a, a+p.outW, cols, isa, s4, write)
		}
	}
}

// product is a matrix product on the input itself over the rows of
// pixels [a, b) (each row its pixel's window: cols elements from at(q)),
// on path isa, arm_nn_mat_mult_nt_t_s8's or (s4) _s4's order.
func (p *pixelOrder) product(a, b, cols int64, isa ISA, s4 bool, write func(end, next int64)) {
	switch {
	case isa == MVE:
		p.mveProduct(a, b, s4, write)
	case s4:
		p.dspProductS4(a, b, cols, write)
	default:
		p.dspProduct(a, b, write)
	}
}

// mveProduct is arm_nn_mat_mult_nt_t_s8 (or _s4) on MVE over rows
// [a, b): blocks of 4 rows (then one of 3 or 2 for _s4), each output
// channel read from the block's rows and written to all of them before
// the next channel reads them again, so every channel but the last is
// written while the block's first row is still to be read; then the rows
// left one at a time (mveRow).
func (p *pixelOrder) mveProduct(a, b int64, s4 bool, write func(end, next int64)) {
	block := func(s, e int64) {
		if p.outC > 1 {
			write(e*p.outC-1, p.from(s))
		}
		write(e*p.outC, p.from(e))
	}
	q := a
	for ; q+4 <= b; q += 4 {
		block(q, q+4)
	}
	if s4 {
		if q+3 <= b {
			block(q, q+3)
			q += 3
		}
		if q+2 <= b {
			block(q, q+2)
			q += 2
		}
	}
	for ; q < b; q++ {
		p.mveRow(q, write)
	}
}

// mveRow is one row q read once per output channel, channels written 4 at
// a time as they are computed and the last outC % 4 after the row's last
// read (arm_nn_mat_mult_nt_t_s8/_s4's lone rows, arm_nn_mat_mul_core_1x_s4).
func (p *pixelOrder) mveRow(q int64, write func(end, next int64)) {
	if k := (p.outC - 1) / 4; k >= 1 {
		write(q*p.outC+4*k, p.from(q))
	}
	write((q+1)*p.outC, p.from(q+1))
}

// dspProduct is arm_nn_mat_mult_nt_t_s8 without MVE over rows [a, b):
// output channels 2 at a time, each pair over every row from the first,
// 2 rows at a time (both written after both are read), then the odd
// channel over every row one at a time. Every pass but the last ends
// with the last row's channels written while the first row is still to be
// read again.
func (p *pixelOrder) dspProduct(a, b int64, write func(end, next int64)) {
	if a >= b {
		return
	}
	c := p.outC
	if c > 2 {
		last := 2 - c%2 // channels of the last pass
		write((b-1)*c+c-last, p.from(a))
	}
	if c%2 == 1 {
		for q := a; q < b; q++ {
			write((q+1)*c, p.from(q+1))
		}
		return
	}
	q := a
	for ; q+2 <= b; q += 2 {
		write((q+2)*c, p.from(q+2))
	}
	if q < b {
		write(b*c, p.from(b))
	}
}

// dspProductS4 is arm_nn_mat_mult_nt_t_s4 without MVE over rows [a, b)
// of cols elements: output channels 4 at a time, each group over every
// row from the first, 2 rows at a time, channels 0 and 2 written before
// both rows are read again (from their second element when cols is odd)
// for channels 1 and 3; then the outC % 4 channels left one at a time
// over every row, 2 rows at a time.
func (p *pixelOrder) dspProductS4(a, b, cols int64, write func(end, next int64)) {
	if a >= b {
		return
	}
	c := p.outC
	groups, left := c/4, c%4
	if groups+left > 1 { // the passes before the last: every row read again
		last := c - 2 // the last such pass's highest channel
		if left == 0 {
			last = c - 5
		}
		write((b-1)*c+last+1, p.from(a))
	}
	if left > 0 {
		q := a
		for ; q+2 <= b; q += 2 {
			write((q+2)*c, p.from(q+2))
		}
		if q < b {
			write(b*c, p.from(b))
		}
		return
	}
	// The last group: rows [q, e) read again after channels c-4 and c-2.
	again := func(q, e int64) int64 {
		if cols%2 == 0 {
			return p.from(q)
		}
		next := p.from(e)
		if cols > 1 {
			for r := q; r < e; r++ {
				next = min(next, p.at(r)+1)
			}
		}
		return next
	}
	q := a
	for ; q+2 <= b; q += 2 {
		write((q+2)*c-1, again(q, q+2))
		write((q+2)*c, p.from(q+2))
	}
	if q < b {
		write(b*c-1, again(q, b))
		write(b*c, p.from(b))
	}
}

// cmsisConv1xN is how arm_convolve_1_x_n_s8/_s4 split a 1xN operator's
// row on MVE (arm_convolve_1_x_n_s8.c 80-99, _s4.c 81-96, the same
// counts as arm_convolve_1_x_n_s8_get_buffer_size_mve): left pixels with
// left padding, unpadded ones, right pixels with right padding; general
// when the counts do not add up (the s8 kernel then runs
// arm_convolve_s8; _s4 fails, lines 93-96); ok false when the kernel
// fails (pad_x·2 + asym_pad is not the total padding: lines 83-86 of
// both; TFLM's DCHECK on the status aborts, or, without it, the output is
// left unwritten) or computes from input it should not read, so that
// its output depends on memory beside the input and no placement is
// safe:
//
//   - s8 and s4: a left pixel whose window reaches past the row reads
//     the pixels after it as data (s8: the im2col copy takes the filter's
//     width from the row's start, line 126; s4:
//     arm_nn_mat_mul_core_1x_s4 reads kernel_x - ker_begin_idx pixels
//     from it, lines 111-115);
//   - s8: the right pixels are computed from a copy of filter width - 1
//     pixels from the first right pixel's window and padding after them
//     (lines 186-190), which is that window only when exactly its last
//     tap is padding: with two or more (the right padding an even count
//     of strides of 2, say 1x5 SAME stride 2 over 9 columns) it takes
//     pixels past the row as data; with none (a total padding of -1, say
//     1x3 VALID stride 2 over 6 columns, where asym_pad = -1 still counts
//     one right pixel, line 88) it replaces the window's last tap by
//     padding. Either computes other outputs than TFLM's reference
//     kernel (tflm_run_m55_cmsis against tflm_run on such models).
func cmsisConv1xN(w *slidingWindow, s4 bool) (left, middle, right int64, general, ok bool) {
	total := (w.outW-1)*w.strideW + w.filterW - w.inW
	asym := total % 2 // C's %, as Go's: -1 for a total of -1
	if w.padW*2+asym != total {
		return 0, 0, 0, false, false
	}
	if w.padW+asym != 0 {
		right = max(1, (w.padW+asym+w.strideW-1)/w.strideW)
	}
	if w.padW != 0 {
		left = max(1, (w.padW+w.strideW-1)/w.strideW)
	}
	middle = max(w.outW-(right+left), 0)
	if right+middle+left != w.outW {
		return 0, 0, 0, true, !s4
	}
	if left > 0 && (left-1)*w.strideW+w.filterW-1-w.padW >= w.inW {
		return 0, 0, 0, false, false
	}
	if !s4 && right > 0 && w.strideW*(left+middle)-w.padW+w.filterW-1 != w.inW {
		return 0, 0, 0, false, false
	}
	return left, middle, right, false, true
}

// mve1xNOrder is the 1xN order on MVE, batch by batch: s8 writes the
// left pixels after one copy of their input and the right ones after
// another, around a product over the unpadded pixels (mveProduct); s4
// computes the left and right pixels one at a time from the input
// (mveRow) around the product. When the counts do not add up the s8
// kernel is arm_convolve_s8 (columns(4)).
func mve1xNOrder(s4 bool) func(k *convCase, isa ISA) (pixelSchedule, bool) {
	return func(k *convCase, isa ISA) (pixelSchedule, bool) {
		left, middle, _, general, ok := cmsisConv1xN(k.w, s4)
		switch {
		case !ok:
			return nil, false
		case general:
			return columns(4), true
		}
		return func(p *pixelOrder, write func(end, next int64)) {
			for base := int64(0); base < p.pixels; base += p.outW {
				mid, right := base+left, base+left+middle
				if s4 {
					for q := base; q < mid; q++ {
						p.mveRow(q, write)
					}
				} else if left > 0 {
					write(mid*p.outC, p.from(mid))
				}
				p.mveProduct(mid, right, s4, write)
				end := base + p.outW
				if s4 {
					for q := right; q < end; q++ {
						p.mveRow(q, write)
					}
				} else if right < end {
					write(end*p.outC, p.from(end))
				}
			}
		}, true
	}
}
