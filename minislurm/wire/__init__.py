"""The transport: how minislurm's processes and commands talk gRPC.

- ``h2grpc``, ``hpack``, ``hpack_huffman``, ``protowire``: the lean client the
  commands use instead of grpcio. grpcio and protobuf alone cost a command
  more start-up time than its whole budget, so the commands speak HTTP/2
  over a plain socket and encode proto3 from a schema generated beside the
  stubs. What it trades: unary and server-streaming calls only, no
  retries, keepalives or load balancing, and one thread per channel; the
  daemons keep grpcio, on both sides of every call between them.
- ``ctlclient``, ``agentclient``: the service clients (controller, node agent)
  on that transport, signing every call.
- ``tls``: TLS sockets, contexts and grpcio credentials (``TLSType=tls/openssl``).
- ``rpc/``: the stubs generated from ``proto/`` (``make proto``; never edited).
- ``convert``: the one mapping between protobuf messages and the core's dataclasses.

Imports the core (``minislurm``) and ``minislurm.security``; the core imports
nothing from here.
"""
