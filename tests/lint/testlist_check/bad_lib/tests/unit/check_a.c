Suite *a_suite(void)
{
}
