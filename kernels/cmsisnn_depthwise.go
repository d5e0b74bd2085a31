package kernels

// cmsisDepthwiseContracts registers, on l, the in-place contracts of DEPTHWISE_CONV_2D
// where TFLM's cmsis_nn kernel runs CMSIS-NN's own functions on l.isa's
// code path. None is registered yet: those operators run CMSIS-NN's
// functions with no contract, and their outputs take bytes of their own.
func cmsisDepthwiseContracts(l *Library) { _ = l }
