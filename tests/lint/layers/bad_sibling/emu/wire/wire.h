/* SPDX-License-Identifier: MIT */
/* Fixture: the wire interface. */
