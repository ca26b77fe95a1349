/* a program the fixture tests use */
int main(void)
{
	return 0;
}
