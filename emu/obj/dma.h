/* SPDX-License-Identifier: MIT */
/* The device's copies into and out of registered memory, marked as DMA for ThreadSanitizer. */
#ifndef ROCEMU_OBJ_DMA_H
#define ROCEMU_OBJ_DMA_H

/*
 * What the engines copy into or out of registered memory is the device's
 * DMA, not a store or load of the program's: a NIC's writes are invisible
 * to ThreadSanitizer, and a program that reads a receive buffer while
 * another message lands in it (udaddy posts all its receives on one
 * buffer) has its own race, ordered or not by its completions. So under
 * ThreadSanitizer these copies are not watched; everything else of the
 * engines is. DMA_BEGIN()/DMA_END() bracket each such copy (mr.c,
 * mem_check.c).
 */
#if defined(__SANITIZE_THREAD__)
/* ThreadSanitizer's runtime: the calling thread's reads are not watched
 * from Begin to the matching End (they nest); nothing is returned. */
void AnnotateIgnoreReadsBegin(const char *file, int line);
/* Ends what AnnotateIgnoreReadsBegin began. */
void AnnotateIgnoreReadsEnd(const char *file, int line);
/* As AnnotateIgnoreReadsBegin, for the thread's writes. */
void AnnotateIgnoreWritesBegin(const char *file, int line);
/* Ends what AnnotateIgnoreWritesBegin began. */
void AnnotateIgnoreWritesEnd(const char *file, int line);
#define DMA_BEGIN()                                        \
	(AnnotateIgnoreReadsBegin(__FILE__, __LINE__),     \
	 AnnotateIgnoreWritesBegin(__FILE__, __LINE__))
#define DMA_END()                                        \
	(AnnotateIgnoreWritesEnd(__FILE__, __LINE__),    \
	 AnnotateIgnoreReadsEnd(__FILE__, __LINE__))
#else
#define DMA_BEGIN() ((void)0)
#define DMA_END() ((void)0)
#endif

#endif
