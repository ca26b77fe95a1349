/* SPDX-License-Identifier: MIT */
/* Fixture: proto's table of opcode names may spell them in hex. */
enum { ROCE_OP_RC_SEND_ONLY = 0x04, ROCE_OP_RC_READ_REQUEST = 0x0c };
