/* SPDX-License-Identifier: MIT */
/* Fixture: a header left directly in emu/. */
