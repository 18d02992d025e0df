/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * hdrext.h - RTP header extensions (RFC 8285): the elements of an access
 * unit gathered once, the block written into each of its packets, and the
 * elements of a received packet found again.
 *
 * A sender gathers the elements whose values belong to a whole access unit
 * (a timestamp, colour space, a stream's MID) in a urtp_hdrext_t, in the
 * one-byte form (IDs 1-14, 1-16 bytes each) or the two-byte form (IDs
 * 1-255, 0-255 bytes each), and seals them into a urtp_hdrext_block_t: the
 * extension header (0xBEDE or 0x1000, length in words), the elements, the
 * transport-wide sequence number's element when one is asked for, and
 * zero padding to a whole word. The packetizer copies the block after the
 * fixed header of every packet and writes a new transport-wide sequence
 * number into each copy (pay.h).
 *
 * Promises:
 *  - Nothing here allocates, and nothing reads or writes outside the
 *    memory given (a block is at most URTP_HDREXT_BLOCK_MAX bytes).
 *  - An element that does not fit the form (ID or length) or the room left
 *    is refused whole: what was gathered before stays valid.
 *  - Parsing accepts exactly RFC 8285's forms: padding bytes (ID 0) between
 *    elements are skipped, ID 15 in the one-byte form ends the elements,
 *    an element running past the extension's length makes the packet's
 *    extension malformed (-EBADMSG); other profiles are not elements
 *    (-ENOTSUP) and are left alone.
 */
#ifndef URTP_HDREXT_H
#define URTP_HDREXT_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define URTP_HDREXT_ONE_BYTE 0xBEDE   /* profile of the one-byte form */
#define URTP_HDREXT_TWO_BYTE 0x1000   /* ... of the two-byte form (appbits 0) */
#define URTP_HDREXT_ONE_BYTE_MAX_ID 14
#define URTP_HDREXT_ONE_BYTE_MAX_LEN 16
#define URTP_HDREXT_MAX 256           /* element bytes an access unit may carry */
/* the extension header, the elements, a transport-wide sequence number
 * (4 bytes at most) and padding */
#define URTP_HDREXT_BLOCK_MAX (4 + URTP_HDREXT_MAX + 4 + 3)
/* draft-holmer-rmcat-transport-wide-cc-extensions-01, as GStreamer's
 * rtphdrexttwcc and libwebrtc name it */
#define URTP_HDREXT_URI_TWCC "http://www.ietf.org/id/draft-holmer-rmcat-transport-wide-cc-extensions-01"

/* The next transport-wide sequence number (its low 16 bits), taken by every
 * thread that sends packets of the session. */
typedef atomic_uint urtp_tw_counter_t;

typedef struct urtp_hdrext {
  uint8_t data[URTP_HDREXT_MAX];  /* the elements, as on the wire */
  size_t len;
  bool two_byte;
  size_t reserved_at;             /* where urtp_hdrext_reserve's data goes */
} urtp_hdrext_t;

/* Forgets the elements; the next ones are of the given form. */
void urtp_hdrext_reset(urtp_hdrext_t *x, bool two_byte);

/* The form elements (id, up to max bytes) need: two-byte when the ID or a
 * length is beyond the one-byte form. */
static inline bool urtp_hdrext_needs_two_byte(unsigned id, size_t max)
{
  return id > URTP_HDREXT_ONE_BYTE_MAX_ID || max > URTP_HDREXT_ONE_BYTE_MAX_LEN;
}

/* Where the data of an element of up to max bytes goes (to be written by
 * the caller, then urtp_hdrext_commit), or NULL when id is not valid in
 * the form (0, 15 in the one-byte form, above 255) or max bytes do not fit
 * the form or the room left. */
uint8_t *urtp_hdrext_reserve(urtp_hdrext_t *x, unsigned id, size_t max);

/* Adds the element reserved last with the n bytes written (n <= max). An
 * empty element is dropped in the one-byte form (which cannot say 0
 * bytes). Returns 0 or -EINVAL. */
int urtp_hdrext_commit(urtp_hdrext_t *x, unsigned id, size_t n);

/* reserve + copy + commit. Returns 0, -EINVAL or -ENOSPC. */
int urtp_hdrext_add(urtp_hdrext_t *x, unsigned id, const void *data, size_t n);

typedef struct urtp_hdrext_block {
  uint8_t bytes[URTP_HDREXT_BLOCK_MAX];
  size_t len;          /* 0: no extension */
  size_t tw_off;       /* offset in bytes of the transport-wide sequence
                        * number's two bytes; 0: none */
} urtp_hdrext_block_t;

/* Seals x's elements (x NULL or empty: none) and, with tw_id (1-255; 0:
 * none), a transport-wide sequence number element into out. The form is
 * x's, or two-byte when tw_id needs it (x's elements are then rewritten in
 * it). Returns 0, -EINVAL (tw_id above 255) or -ENOSPC (x's one-byte
 * elements grown past URTP_HDREXT_MAX by the two-byte form). */
int urtp_hdrext_seal(const urtp_hdrext_t *x, unsigned tw_id, urtp_hdrext_block_t *out);

/* Elements of a received extension (urtp_rtp_parse's ext_profile,
 * ext_data, ext_len). */
typedef struct urtp_hdrext_iter {
  const uint8_t *p, *end;
  bool two_byte;
} urtp_hdrext_iter_t;

/* Returns 0, or -ENOTSUP when profile is neither form. */
int urtp_hdrext_iter_init(urtp_hdrext_iter_t *it, uint16_t profile, const uint8_t *data,
                          size_t len);

/* The next element: 1 (*id, *data, *len set), 0 at the end, -EBADMSG when
 * an element overruns the extension. */
int urtp_hdrext_next(urtp_hdrext_iter_t *it, unsigned *id, const uint8_t **data, size_t *len);

/* The element id of a received extension: its data and length, or NULL
 * (absent, malformed, other profile). */
const uint8_t *urtp_hdrext_find(uint16_t profile, const uint8_t *data, size_t len, unsigned id,
                                size_t *out_len);

/* Merges the elements of a received extension (profile2, data2, len2)
 * into an access unit's (*profile, data, *len, at most cap bytes): those
 * with an ID already there replace it, the others are added. The result is
 * in the two-byte form when either was. Returns 0; -EBADMSG (data2
 * malformed: nothing changed), -ENOTSUP (profile2 is no form of RFC 8285:
 * nothing changed), -ENOSPC (the union does not fit: nothing changed). */
int urtp_hdrext_merge(uint16_t *profile, uint8_t *data, uint16_t *len, size_t cap,
                      uint16_t profile2, const uint8_t *data2, size_t len2);

/* Writes seq into the transport-wide sequence number element tw_id of the
 * RTP packet pkt[0..len) (a retransmission gets a number of its own).
 * Returns 0, or -ENOENT when the packet has no such element of 2 bytes. */
int urtp_hdrext_restamp(uint8_t *pkt, size_t len, unsigned tw_id, uint16_t seq);

#endif
