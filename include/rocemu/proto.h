/* SPDX-License-Identifier: MIT */
/* rocemu's wire codec in one include: headers, opcodes, ICRC, frames, pcap I/O. */
#ifndef ROCEMU_PROTO_H
#define ROCEMU_PROTO_H

#include "rocemu/aeth.h"
#include "rocemu/cm.h"
#include "rocemu/datagram.h"
#include "rocemu/dissect.h"
#include "rocemu/frame.h"
#include "rocemu/grh.h"
#include "rocemu/ibhdr.h"
#include "rocemu/icrc.h"
#include "rocemu/ipid.h"
#include "rocemu/opcode.h"
#include "rocemu/packet.h"
#include "rocemu/pcapio.h"
#include "rocemu/psn.h"

#endif
