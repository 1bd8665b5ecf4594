from mlxref.cli import main

raise SystemExit(main())
