/* The original model for ref.cc, in the flash image: MODEL_FILE is its
 * path (Makefile), aligned to 16 bytes as TFLM reads it in place. */
	.section .rodata.model_tflite, "a"
	.balign 16
	.global model_tflite
model_tflite:
	.incbin MODEL_FILE
