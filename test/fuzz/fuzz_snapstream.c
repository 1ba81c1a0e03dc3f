/*
 * Fuzz target: the snapshot stream decoder of the agent (src/snapshot/etcdsnap.c), which reads
 * what an etcd member sends: gRPC frames of protobuf SnapshotResponse messages (and, for the
 * gateway form, JSON lines).
 *
 * Input: the first byte picks the feed size (1..256 bytes at a time) and the form (odd:
 * gateway lines); the rest is the response body.
 *
 * Invariants: the sink receives exactly the bytes the decoder counts, never more than the
 * body holds, in the announced budget (expected + the 32-byte trailer); a stream that
 * finishes cleanly delivered exactly that budget; a failed feed stays failed; one
 * SnapshotResponse decoded alone gives a blob inside its input.
 */
#include "snapshot/etcdsnap.h"

#include "fuzz.h"

struct count {
	uint64_t bytes;
};

static int sink(void *ud, const void *p, size_t n, char *err, size_t errcap)
{
	struct count *c = ud;

	(void)p;
	(void)err;
	(void)errcap;
	c->bytes += n;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct eo_snapstream ss;
	struct count c = {0};
	const unsigned char *blob = NULL;
	uint64_t remaining;
	bool has_rem, failed = false;
	char version[32], err[256];
	size_t step, off, take, blen;
	int rc;

	if (size < 1)
		return 0;
	step = (size_t)(data[0] >> 1) + 1;
	if ((data[0] & 1) ? eo_snapstream_init(&ss, sink, &c) != 0
			  : eo_snapstream_init_grpc(&ss, sink, &c) != 0)
		return 0;
	for (off = 1; off < size; off += take) {
		take = size - off < step ? size - off : step;
		rc = eo_snapstream_feed(&ss, (const char *)data + off, take);
		FUZZ_CHECK(!failed || rc != 0, "a failed stream accepted more input");
		if (rc != 0)
			failed = true;
		FUZZ_CHECK(c.bytes == ss.bytes, "sink got %llu bytes, decoder counted %llu",
			   (unsigned long long)c.bytes, (unsigned long long)ss.bytes);
		FUZZ_CHECK(c.bytes <= size, "more bytes out (%llu) than in (%zu)",
			   (unsigned long long)c.bytes, size);
	}
	if (ss.have_expected)
		FUZZ_CHECK(c.bytes <= ss.expected + EO_SNAP_HASH_LEN, "over the announced size");
	if (eo_snapstream_finish(&ss) == 0)
		FUZZ_CHECK(ss.have_expected && c.bytes == ss.expected + EO_SNAP_HASH_LEN,
			   "finished cleanly with %llu bytes of %llu", (unsigned long long)c.bytes,
			   (unsigned long long)ss.expected);
	eo_snapstream_free(&ss);

	if (eo_snapstream_decode_pb(data + 1, size - 1, &blob, &blen, &remaining, &has_rem, version,
				    sizeof(version), err, sizeof(err)) == 1 &&
	    blob != NULL)
		FUZZ_CHECK(blob >= data + 1 && blob + blen <= data + size,
			   "blob outside its input");
	return 0;
}
