/* SPDX-License-Identifier: MIT */
/* Does not compile. */
int main(void)
{
	return undeclared;
}
