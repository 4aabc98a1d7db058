/*
 * worker-mem.c - the worker's memory made present in bulk (see
 * worker-int.h).  Worker only.
 *
 * Starting Python writes to about a thousand pages the worker does not
 * have yet: libpython's static data (its types, its frozen modules), the
 * heap, and the arenas of Python's object allocator.  Each first write is
 * a page fault, a trap into the kernel, and on a virtual machine whose
 * traps go to the hypervisor one costs 15 to 30 us: on the 2-CPU VM coil
 * is measured on, 20 ms of a 60 ms cold start.  MADV_POPULATE_WRITE
 * (Linux 5.14) makes a whole range present in one call, at 1 to 2 us a
 * page there; on bare metal both are cheaper and the call still saves the
 * traps.  Where it is missing the pages fault in as before.
 *
 * What is made present is what would be touched anyway: libpython's
 * static data (300 of its 400 pages are written as Python starts), and
 * each arena made while Python starts (an arena's pools are handed out in
 * order).  Not the arenas of later cells: a page made present and not yet
 * used is shared with the checkpoints forked after, and its first write
 * then copies it for them (13% more checkpoint memory in a review's
 * measure), where a page never touched costs them nothing.  The heap is
 * left to fault: glibc grows it a little at a time, and nothing tells us
 * when (growing it ahead under a fence chunk saved 130 faults but under
 * a millisecond).
 */
#include "config.h"

#include <Python.h>

#include <link.h>
#include <sys/mman.h>
#include <unistd.h>

#include "worker-int.h"

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23		/* Linux 5.14 */
#endif

static bool worker_mem_starting = true;

static void
worker_populate(uintptr_t start, uintptr_t end)
{
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);

	start = (start + page - 1) & ~(page - 1);
	end = (end + page - 1) & ~(page - 1);
	if (start < end)
		(void)madvise((void *)start, end - start, MADV_POPULATE_WRITE);
}

/* The writable segments of the object holding address arg (libpython:
 * coil itself when it is linked in, else libpython.so), less the part
 * made read-only after relocation (GNU_RELRO), which a write would fault
 * on.  1 once that object is done. */
static int
worker_populate_data(struct dl_phdr_info *info, size_t size, void *arg)
{
	uintptr_t relro = 0, start, end, at = (uintptr_t)arg;
	bool holds = false;
	int i;

	(void)size;
	for (i = 0; i < info->dlpi_phnum; i++) {
		start = info->dlpi_addr + info->dlpi_phdr[i].p_vaddr;
		if (info->dlpi_phdr[i].p_type == PT_LOAD && at >= start &&
		    at - start < info->dlpi_phdr[i].p_memsz)
			holds = true;
	}
	if (!holds)
		return 0;
	for (i = 0; i < info->dlpi_phnum; i++)
		if (info->dlpi_phdr[i].p_type == PT_GNU_RELRO)
			relro = info->dlpi_addr + info->dlpi_phdr[i].p_vaddr +
			    info->dlpi_phdr[i].p_memsz;
	for (i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

		if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_W))
			continue;
		start = info->dlpi_addr + ph->p_vaddr;
		end = start + ph->p_memsz;
		worker_populate(start > relro || relro > end ? start : relro,
		    end);
	}
	return 1;
}

/* An arena of pymalloc's, present at once while Python starts.  As
 * Python's own (_PyObject_ArenaMmap): NULL when mmap fails. */
static void *
worker_arena_alloc(void *ctx, size_t size)
{
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE,
	    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	(void)ctx;
	if (p == MAP_FAILED)
		return NULL;
	if (worker_mem_starting)
		worker_populate((uintptr_t)p, (uintptr_t)p + size);
	return p;
}

static void
worker_arena_free(void *ctx, void *p, size_t size)
{
	(void)ctx;
	munmap(p, size);
}

void
worker_mem_prepare(void)
{
	PyObjectArenaAllocator arena = { NULL, worker_arena_alloc,
	    worker_arena_free };

	dl_iterate_phdr(worker_populate_data,
	    (void *)(uintptr_t)&Py_InitializeFromConfig);
	PyObject_SetArenaAllocator(&arena);
}

void
worker_mem_started(void)
{
	worker_mem_starting = false;
}

