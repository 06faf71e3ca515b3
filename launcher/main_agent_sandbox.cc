#include "launcher/cli.h"

int main(int argc, char** argv) { return asbx::agent_sandbox_main(argc, argv); }
