int main(void)
{
	srunner_create(a_suite());
}
