/* SPDX-License-Identifier: BSD-2-Clause */
/* Types shared by the uvgrtp elements. */
#ifndef __GST_UVGRTP_COMMON_H__
#define __GST_UVGRTP_COMMON_H__

#include <gst/gst.h>

G_BEGIN_DECLS

/* Values match urtp_io_mode_t in lib/urtp/net.h. */
typedef enum {
  GST_UVGRTP_SEND_MODE_AUTO = 0,
  GST_UVGRTP_SEND_MODE_GSO = 1,
  GST_UVGRTP_SEND_MODE_MMSG = 3,
  GST_UVGRTP_SEND_MODE_PLAIN = 4,
} GstUvgRtpSendMode;

typedef enum {
  GST_UVGRTP_RECV_MODE_AUTO = 0,
  GST_UVGRTP_RECV_MODE_GRO = 2,
  GST_UVGRTP_RECV_MODE_MMSG = 3,
  GST_UVGRTP_RECV_MODE_PLAIN = 4,
} GstUvgRtpRecvMode;

/* Same values and nicks as rtph265pay's aggregate-mode. */
typedef enum {
  GST_UVGRTP_AGGREGATE_NONE,
  GST_UVGRTP_AGGREGATE_ZERO_LATENCY,
  GST_UVGRTP_AGGREGATE_MAX,
} GstUvgRtpAggregateMode;

/* Values match urtp_loss_policy_t in lib/urtp/depay.h. */
typedef enum {
  GST_UVGRTP_LOSS_DROP_AU,
  GST_UVGRTP_LOSS_DROP_NAL,
} GstUvgRtpLossPolicy;

#define GST_TYPE_UVGRTP_SEND_MODE (gst_uvgrtp_send_mode_get_type ())
#define GST_TYPE_UVGRTP_RECV_MODE (gst_uvgrtp_recv_mode_get_type ())
#define GST_TYPE_UVGRTP_AGGREGATE_MODE (gst_uvgrtp_aggregate_mode_get_type ())
#define GST_TYPE_UVGRTP_LOSS_POLICY (gst_uvgrtp_loss_policy_get_type ())

GType gst_uvgrtp_send_mode_get_type (void);
GType gst_uvgrtp_recv_mode_get_type (void);
GType gst_uvgrtp_aggregate_mode_get_type (void);
GType gst_uvgrtp_loss_policy_get_type (void);

GST_ELEMENT_REGISTER_DECLARE (uvgrtpsink);
GST_ELEMENT_REGISTER_DECLARE (uvgrtpsrc);
GST_ELEMENT_REGISTER_DECLARE (uvgrtpzrtp);

G_END_DECLS

#endif
