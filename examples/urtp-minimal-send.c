/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * urtp-minimal-send FILE HOST PORT: sends every access unit of an Annex-B
 * H.265 file as RTP (payload type 96, RTCP on port + 1) at 30 frames a
 * second. Everything but the file is urtp.h's defaults.
 */
#define _POSIX_C_SOURCE 200809L /* nanosleep */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <urtp/urtp.h>

int main(int argc, char **argv)
{
  if (argc != 4) {
    fprintf(stderr, "usage: urtp-minimal-send FILE HOST PORT\n");
    return 2;
  }
  FILE *in = fopen(argv[1], "rb");
  long size = in && fseek(in, 0, SEEK_END) == 0 ? ftell(in) : -1;
  uint8_t *file = size > 0 ? malloc((size_t)size) : NULL;
  if (!file || fseek(in, 0, SEEK_SET) != 0 || fread(file, 1, (size_t)size, in) != (size_t)size) {
    fprintf(stderr, "urtp-minimal-send: cannot read %s\n", argv[1]);
    return 1;
  }

  urtp_send_config_t cfg;
  urtp_send_config_init(&cfg, URTP_CODEC_H265);
  cfg.host = argv[2];
  cfg.port = (uint16_t)atoi(argv[3]);
  urtp_sender_t *s;
  if (urtp_sender_open(&s, &cfg) < 0)
    return 1;

  const uint64_t frame_ns = 1000000000 / 30;
  uint64_t pts = 0;
  for (size_t at = 0, len; at < (size_t)size; at += len, pts += frame_ns) {
    len = urtp_au_length(URTP_CODEC_H265, file + at, (size_t)size - at);
    if (urtp_sender_push(s, file + at, len, pts) < 0)
      return 1;
    nanosleep(&(struct timespec){ .tv_nsec = (long)frame_ns }, NULL);
  }
  return urtp_sender_close(s) == 0 ? 0 : 1;
}
