from colibri.cli import main

raise SystemExit(main())
