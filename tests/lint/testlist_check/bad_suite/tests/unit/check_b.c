Suite *b_suite(void)
{
}
