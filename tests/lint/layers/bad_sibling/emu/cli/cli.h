/* SPDX-License-Identifier: MIT */
/* Fixture: the tool's header. */
