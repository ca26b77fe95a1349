/* SPDX-License-Identifier: MIT */
/* Fixture: an engine header. */
