/* SPDX-License-Identifier: MIT */
/* Fixture: a header in a folder the table does not know. */
