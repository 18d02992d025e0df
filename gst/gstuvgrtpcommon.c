/* SPDX-License-Identifier: BSD-2-Clause */
#include "gstuvgrtpcommon.h"

GType
gst_uvgrtp_send_mode_get_type (void)
{
  static GType type = 0;
  static const GEnumValue values[] = {
    {GST_UVGRTP_SEND_MODE_AUTO, "UDP GSO where the kernel has it, else sendmmsg",
        "auto"},
    {GST_UVGRTP_SEND_MODE_GSO, "UDP generic segmentation offload (UDP_SEGMENT)",
        "gso"},
    {GST_UVGRTP_SEND_MODE_MMSG, "sendmmsg, one datagram per message", "mmsg"},
    {GST_UVGRTP_SEND_MODE_PLAIN, "One sendmsg per datagram", "plain"},
    {0, NULL, NULL}
  };

  if (g_once_init_enter (&type)) {
    GType t = g_enum_register_static ("GstUvgRtpSendMode", values);
    g_once_init_leave (&type, t);
  }
  return type;
}

GType
gst_uvgrtp_recv_mode_get_type (void)
{
  static GType type = 0;
  static const GEnumValue values[] = {
    {GST_UVGRTP_RECV_MODE_AUTO, "UDP GRO where the kernel has it, else recvmmsg",
        "auto"},
    {GST_UVGRTP_RECV_MODE_GRO, "UDP generic receive offload (UDP_GRO)", "gro"},
    {GST_UVGRTP_RECV_MODE_MMSG, "recvmmsg, a batch per system call", "mmsg"},
    {GST_UVGRTP_RECV_MODE_PLAIN, "One recvmsg per datagram", "plain"},
    {0, NULL, NULL}
  };

  if (g_once_init_enter (&type)) {
    GType t = g_enum_register_static ("GstUvgRtpRecvMode", values);
    g_once_init_leave (&type, t);
  }
  return type;
}

GType
gst_uvgrtp_aggregate_mode_get_type (void)
{
  static GType type = 0;
  static const GEnumValue values[] = {
    {GST_UVGRTP_AGGREGATE_NONE, "Do not aggregate NAL units", "none"},
    {GST_UVGRTP_AGGREGATE_ZERO_LATENCY,
        "Aggregate NAL units of the same input buffer", "zero-latency"},
    {GST_UVGRTP_AGGREGATE_MAX,
        "Aggregate NAL units as much as possible within an access unit", "max"},
    /* rtph264pay's name of it, so that its pipelines parse */
    {GST_UVGRTP_AGGREGATE_MAX, "Same as max (rtph264pay's name)", "max-stap"},
    {0, NULL, NULL}
  };

  if (g_once_init_enter (&type)) {
    GType t = g_enum_register_static ("GstUvgRtpAggregateMode", values);
    g_once_init_leave (&type, t);
  }
  return type;
}

GType
gst_uvgrtp_loss_policy_get_type (void)
{
  static GType type = 0;
  static const GEnumValue values[] = {
    {GST_UVGRTP_LOSS_DROP_AU, "Drop every access unit that lost a packet",
        "drop-au"},
    {GST_UVGRTP_LOSS_DROP_NAL,
          "Drop only the damaged NAL units and flag the buffer as corrupted",
        "drop-nal"},
    {0, NULL, NULL}
  };

  if (g_once_init_enter (&type)) {
    GType t = g_enum_register_static ("GstUvgRtpLossPolicy", values);
    g_once_init_leave (&type, t);
  }
  return type;
}
