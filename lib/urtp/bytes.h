/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * bytes.h - network byte order (big-endian) reads and writes at any
 * alignment: the one set every module uses. Internal.
 */
#ifndef URTP_BYTES_H
#define URTP_BYTES_H

#include <stdint.h>

static inline uint16_t urtp_rd16(const uint8_t *p)
{
  return (uint16_t)(p[0] << 8 | p[1]);
}

static inline uint32_t urtp_rd32(const uint8_t *p)
{
  return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static inline void urtp_wr16(uint8_t *p, uint16_t v)
{
  p[0] = (uint8_t)(v >> 8);
  p[1] = (uint8_t)v;
}

static inline void urtp_wr32(uint8_t *p, uint32_t v)
{
  p[0] = (uint8_t)(v >> 24);
  p[1] = (uint8_t)(v >> 16);
  p[2] = (uint8_t)(v >> 8);
  p[3] = (uint8_t)v;
}

#endif
