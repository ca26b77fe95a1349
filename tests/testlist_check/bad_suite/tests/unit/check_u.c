Suite *u_suite(void)
{
}
