/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * urtp-minimal-recv PORT FILE COUNT: receives H.265 over RTP (payload type
 * 96, RTCP on port + 1) and writes the first COUNT access units to FILE as
 * Annex-B, parameter sets included, as a decoder reads it.
 */
#include <stdio.h>
#include <stdlib.h>

#include <urtp/urtp.h>

int main(int argc, char **argv)
{
  if (argc != 4) {
    fprintf(stderr, "usage: urtp-minimal-recv PORT FILE COUNT\n");
    return 2;
  }
  urtp_recv_config_t cfg;
  urtp_recv_config_init(&cfg, URTP_CODEC_H265);
  cfg.port = (uint16_t)atoi(argv[1]);
  urtp_receiver_t *r;
  FILE *out = fopen(argv[2], "wb");
  if (!out || urtp_receiver_open(&r, &cfg) < 0) {
    fprintf(stderr, "urtp-minimal-recv: cannot write %s or bind port %s\n", argv[2], argv[1]);
    return 1;
  }

  urtp_frame_t f;
  for (long n = atol(argv[3]); n > 0; n--) {
    if (urtp_receiver_pull(r, &f, 10000) <= 0) {
      fprintf(stderr, "urtp-minimal-recv: nothing for 10 s, %ld access units short\n", n);
      return 1;
    }
    if (f.params)
      fwrite(f.params, 1, f.params_len, out);
    fwrite(f.data, 1, f.len, out);
  }
  urtp_receiver_close(r);
  return fclose(out) == 0 ? 0 : 1;
}
