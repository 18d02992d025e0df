/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * sync.h - lip sync: the streams of one participant on one timeline.
 *
 * A receiver times each stream on its own: an access unit is presented when
 * its stream's packets arrive (timing.h). Two streams of one sender (its
 * audio and its video, tied by their RTCP CNAME) that take different paths,
 * or wait differently in the sender, then play out of step by the
 * difference. Sender reports say which RTP timestamp of each stream was
 * sampled at which instant of the sender's wall clock (NTP); so each
 * stream's
 *
 *   offset = presentation time (receiver's clock) - sender's NTP time
 *
 * of the same access unit is how late that stream is presented. The streams
 * of a group (same CNAME, same receiver clock) are put in step by
 * delaying each by what it is ahead of the latest one:
 *
 *   delay(member) = max(offset of the group) - offset(member) >= 0
 *
 * which is what rtpbin does with its jitter buffers' ts-offset.
 *
 * Groups live in a registry of the process, so streams received by
 * different objects (two uvgrtpsrc elements, or two recvstreams of a
 * program) find each other by CNAME; `domain` names the receiver's clock
 * (streams timed on different clocks are never compared).
 *
 * Promises:
 *  - Thread-safe: each member is driven by one thread; members of a group
 *    may run on different threads. urtp_sync_delay() is a lock-free read
 *    for the hot path; urtp_sync_update() takes the registry's lock only
 *    when the offset moved (a few times per sender report, not per packet).
 *  - A member's delay changes only by more than URTP_SYNC_DEAD_BAND (jitter
 *    of the estimates does not shake presentation times) and is never more
 *    than URTP_SYNC_MAX_DELAY: an offset that would need more (a sender
 *    report that lies, a stream stuck far behind) is left out of the
 *    group's maximum and its member is not delayed.
 *  - A member that leaves, or whose offset is withdrawn (its source
 *    changed), no longer counts: the others' delays follow at once.
 *  - Memory: one small allocation per member and per group, freed with the
 *    last member.
 */
#ifndef URTP_SYNC_H
#define URTP_SYNC_H

#include <stdint.h>

#define URTP_SYNC_DEAD_BAND 1000000ll          /* ns */
#define URTP_SYNC_MAX_DELAY 3000000000ll       /* ns, as rtpbin's max-ts-offset */

typedef struct urtp_sync_member urtp_sync_member_t;

/* A member in no group yet (NULL: out of memory). */
urtp_sync_member_t *urtp_sync_member_new(void);
/* Leaves its group; NULL is ignored. */
void urtp_sync_member_free(urtp_sync_member_t *m);

/* The member's stream is presented `offset` ns after the sender's NTP time
 * (see above) and belongs to participant `cname` on clock `domain`.
 * Changing cname or domain moves the member to that group. */
void urtp_sync_update(urtp_sync_member_t *m, const char *cname, uint64_t domain,
                      int64_t offset);

/* The member no longer knows its offset (a new source): it leaves its
 * group until the next update. */
void urtp_sync_withdraw(urtp_sync_member_t *m);

/* ns to add to the member's presentation times: >= 0. */
int64_t urtp_sync_delay(const urtp_sync_member_t *m);

/* The offset last given, and whether there is one. */
int urtp_sync_offset(const urtp_sync_member_t *m, int64_t *offset);

#endif
