/* SPDX-License-Identifier: MIT */
#ifndef ROCEMU_FRAME_H
#define ROCEMU_FRAME_H
#endif
