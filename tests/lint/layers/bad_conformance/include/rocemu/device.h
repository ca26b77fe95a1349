/* SPDX-License-Identifier: MIT */
#ifndef ROCEMU_DEVICE_H
#define ROCEMU_DEVICE_H
#endif
