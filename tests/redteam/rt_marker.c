/* The program the red-team attacks try to start where the policy forbids it.
 *
 *   rt_marker [MARKER]
 *
 * Says "RT-CHILD-RAN" and creates MARKER: either one is proof that it ran.
 * Exits 0 quietly when MARKER is "-" (the "allowed" twin in exec races).
 */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	const char *marker = argc > 1 ? argv[1] : "";
	int fd;

	printf("RT-CHILD-RAN %s\n", argv[0]);
	fflush(stdout);
	if (*marker && strcmp(marker, "-") != 0) {
		fd = open(marker, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		if (fd >= 0) {
			(void)!write(fd, "ran\n", 4);
			close(fd);
		}
	}
	return 0;
}
