/* SPDX-License-Identifier: BSD-2-Clause */
#include "urtp/twcc.h"

#include <string.h>

#define MASK (URTP_TWCC_WINDOW - 1)

/* seq extended to the number nearest to `near` (-1: none yet, taken as is). */
static int64_t extend(int64_t near, uint16_t seq)
{
  if (near < 0)
    return seq;
  return near + (int16_t)(uint16_t)(seq - (uint16_t)near);
}

/* --- receiver ----------------------------------------------------------- */

void urtp_twcc_recorder_init(urtp_twcc_recorder_t *r)
{
  memset(r, 0, sizeof(*r));
  for (size_t i = 0; i < URTP_TWCC_WINDOW; i++)
    r->arrival[i] = INT64_MIN;
  r->highest = -1;
}

/* Starts over from ext, with nothing arrived but what the caller adds. */
static void restart(urtp_twcc_recorder_t *r, int64_t ext)
{
  for (size_t i = 0; i < URTP_TWCC_WINDOW; i++)
    r->arrival[i] = INT64_MIN;
  r->highest = r->next = ext;
}

void urtp_twcc_recorder_add(urtp_twcc_recorder_t *r, uint16_t seq, int64_t arrival_us)
{
  int64_t ext = extend(r->highest, seq);
  r->packets++;
  if (r->highest < 0) {
    restart(r, seq + ((int64_t)1 << 16)); /* room below for reordering */
    r->arrival[r->highest & MASK] = arrival_us;
    return;
  }
  if (ext > r->highest + URTP_TWCC_WINDOW || ext < r->highest - URTP_TWCC_WINDOW) {
    /* a jump no window spans: a sender that restarted, once a second
     * packet follows the first closely; a lone one (forged, stray) costs
     * nothing but a count */
    uint16_t after = (uint16_t)(seq - r->jump_seq);
    if (!r->jump_valid || after == 0 || after > URTP_TWCC_JUMP_CONFIRM) {
      r->jump_valid = true;
      r->jump_seq = seq;
      r->jump_arrival = arrival_us;
      r->strays++;
      return;
    }
    r->jump_valid = false;
    r->strays--;                /* the first was no stray after all */
    r->restarts++;
    restart(r, r->jump_seq + ((int64_t)1 << 16));
    r->arrival[r->highest & MASK] = r->jump_arrival;
    ext = r->highest + after;
    for (int64_t e = r->highest + 1; e < ext; e++)
      r->arrival[e & MASK] = INT64_MIN;
    r->highest = ext;
    r->arrival[ext & MASK] = arrival_us;
    return;
  }
  if (ext < r->next) {
    r->late++;                  /* reported missing already */
    return;
  }
  if (ext > r->highest) {
    /* slots between the old newest and this one are new: not arrived */
    for (int64_t e = r->highest + 1; e < ext; e++)
      r->arrival[e & MASK] = INT64_MIN;
    r->highest = ext;
    /* the window's oldest are overwritten: they can no longer be reported */
    if (r->next <= r->highest - URTP_TWCC_WINDOW)
      r->next = r->highest - URTP_TWCC_WINDOW + 1;
  } else if (r->arrival[ext & MASK] != INT64_MIN) {
    r->duplicates++;
    return;
  }
  r->arrival[ext & MASK] = arrival_us;
}

bool urtp_twcc_recorder_pending(const urtp_twcc_recorder_t *r)
{
  return r->highest >= 0 && r->next <= r->highest;
}

/* The messages of either format (fmt: URTP_CCFB_FMT_*) for what is
 * pending, as far as cap goes. */
static size_t feedback(urtp_twcc_recorder_t *r, uint8_t *out, size_t cap, uint32_t sender_ssrc,
                       uint32_t media_ssrc, int fmt, uint64_t report_us)
{
  urtp_ccfb_pkt_t *pkts = r->scratch;
  size_t used = 0;
  while (urtp_twcc_recorder_pending(r)) {
    size_t n = 0;
    for (int64_t e = r->next; e <= r->highest && n < URTP_TWCC_MAX_PACKETS; e++, n++) {
      int64_t a = r->arrival[e & MASK];
      pkts[n] = (urtp_ccfb_pkt_t){ media_ssrc, (uint16_t)e, a != INT64_MIN, 0,
                                   a != INT64_MIN ? a : 0 };
    }
    size_t taken;
    int w;
    if (fmt == URTP_CCFB_FMT_TWCC) {
      size_t first = 0;
      while (first < n && !pkts[first].received)
        first++;
      if (first == n) {
        /* a run of losses longer than a message, with no arrival to time
         * it by: passed over, counted */
        r->unreported += n;
        r->next += (int64_t)n;
        continue;
      }
      w = urtp_twcc_write(out + used, cap - used, sender_ssrc, media_ssrc, r->fb_count, pkts, n,
                          &taken);
    } else {
      w = urtp_rfc8888_write(out + used, cap - used, sender_ssrc, report_us, pkts, n, &taken);
    }
    if (w <= 0)
      break;                    /* no room left: the rest next time */
    used += (size_t)w;
    r->fb_count++;
    r->next += (int64_t)taken;
  }
  return used;
}

size_t urtp_twcc_recorder_feedback(urtp_twcc_recorder_t *r, uint8_t *out, size_t cap,
                                   uint32_t sender_ssrc, uint32_t media_ssrc)
{
  return feedback(r, out, cap, sender_ssrc, media_ssrc, URTP_CCFB_FMT_TWCC, 0);
}

size_t urtp_twcc_recorder_rfc8888(urtp_twcc_recorder_t *r, uint8_t *out, size_t cap,
                                  uint32_t sender_ssrc, uint32_t media_ssrc, uint64_t report_us)
{
  return feedback(r, out, cap, sender_ssrc, media_ssrc, URTP_CCFB_FMT_RFC8888, report_us);
}

/* --- sender ------------------------------------------------------------- */

void urtp_twcc_history_init(urtp_twcc_history_t *h)
{
  memset(h, 0, sizeof(*h));
  for (size_t i = 0; i < URTP_TWCC_WINDOW; i++)
    h->slot[i].ext = -1;
  h->highest = -1;
}

void urtp_twcc_history_add(urtp_twcc_history_t *h, uint16_t seq, int64_t send_us, uint32_t size,
                           unsigned flags)
{
  int64_t ext = extend(h->highest, seq);
  if (h->highest < 0)
    ext = seq + ((int64_t)1 << 16);
  if (ext > h->highest)
    h->highest = ext;
  urtp_twcc_sent_slot_t *s = &h->slot[ext & MASK];
  *s = (urtp_twcc_sent_slot_t){ ext, send_us, size, (uint16_t)flags, 0 };
}

size_t urtp_twcc_history_match(urtp_twcc_history_t *h, const urtp_ccfb_pkt_t *fb, size_t n,
                               urtp_twcc_result_t *out, size_t max)
{
  return urtp_twcc_history_match_for(h, 0, fb, n, out, max);
}

size_t urtp_twcc_history_match_for(urtp_twcc_history_t *h, unsigned rcv,
                                   const urtp_ccfb_pkt_t *fb, size_t n, urtp_twcc_result_t *out,
                                   size_t max)
{
  size_t m = 0;
  uint8_t bit = (uint8_t)(1u << (rcv % URTP_TWCC_RECEIVERS));
  for (size_t i = 0; i < n && m < max; i++) {
    if (h->highest < 0) {
      h->unknown++;
      continue;
    }
    int64_t ext = extend(h->highest, fb[i].seq);
    urtp_twcc_sent_slot_t *s = &h->slot[ext & MASK];
    if (ext > h->highest || s->ext != ext) {
      h->unknown++;             /* never sent, or forgotten */
      continue;
    }
    if (s->reported & bit) {
      h->repeated++;
      continue;
    }
    s->reported |= bit;
    out[m++] = (urtp_twcc_result_t){ ext, s->send_us,
                                     fb[i].received ? fb[i].arrival_us : INT64_MIN, s->size,
                                     s->flags, fb[i].received };
  }
  return m;
}
