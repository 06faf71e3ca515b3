#include "launcher/cli.h"

int main(int argc, char** argv) { return asbx::sandbox_run_main(argc, argv); }
