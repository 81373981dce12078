"""The kubelet's device-plugin API (``deviceplugin/v1beta1``) over gRPC on unix sockets.

The node agent forks container processes while gRPC threads run; the children exec at once and
never use gRPC, so gRPC's fork handlers (and the log line each fork prints about them) serve no
purpose. Both settings must be in the environment before ``grpc`` is first imported.
"""

import os

os.environ.setdefault("GRPC_ENABLE_FORK_SUPPORT", "false")
os.environ.setdefault("GRPC_VERBOSITY", "ERROR")
