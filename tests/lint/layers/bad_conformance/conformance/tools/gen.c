/* SPDX-License-Identifier: MIT */
/* A folder of conformance/ that is neither engine nor agent. */
