/* SPDX-License-Identifier: MIT */
/* Fixture: an object header. */
