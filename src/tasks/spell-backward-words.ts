// The words of the spell_backward task (src/tasks/spell-backward.ts): a fixed sample of reasoning-gym's word list
// (open-thought/reasoning-gym 49b0713, reasoning_gym/data/words3to10.txt, Apache-2.0), lowercase words of 3 to 10
// letters, at most 300 of each length. Written by scripts/make-spell-backward-words.py; do not edit.

/** Words of 3 to 10 lowercase letters, space-separated, grouped by length. */
export const SPELL_BACKWARD_WORDS =
  'aal abb ace add ady aes age aha ail ait ako alb alk alo aly ami ana ann apa ara ark art ary ask ast ' +
  'auk ave awd awn ayu bac bag bam bar baw bee ben bey big biz bob bon bor bra bug bur buy cad cam car ' +
  'cay cha cho cly coe con cor cow coz cub cum cut dab dag dal dao das deb den dey dib dig dis dob doe ' +
  'don dos dry due dun dye eat eel egg elb elk els emu eon ere ers eve eyn fag fat fee fet fez fie fip ' +
  'fix fob fog for fow fra fub fun gab gaj gan gas gaw ged gem ger gez gie gim gip goa gog gon gos gra ' +
  'gue gup guy gyn hag ham hap haw hen het hey him his hod hoi how hub hug hup iao ich ife ill imu inn ' +
  'irk ist ivy jab jap jay job joy jut kat keb keg ket khu kin koa kon kos lab lag lam lar law lea lei ' +
  'leu ley lim lis lob log lot loy lum lye mad man mar maw mem mew mid mim mix mon mor mow mug naa nag ' +
  'nan naw neb nei new nig nip noa non noy nul nye oam obe ock ode off oii oki ona ope orb orf ose out ' +
  'owe own pad pam par paw pea peg per phi pia pig pip pix pod pol pop poy psi pub pul pur pya qua rad ' +
  'raj rap raw reb ref rep rex ria rie rio rix rod roi rox rue run rye sac sah sal sao sat say see ser ' +
  'sex shi sib sig sip sit sky sma soc sog sol sot sow spy sty sue sup swa tab tag tal tao tat taw tch ' +
  'abac acle admi ager aiel akra alif alum ammo ango apar ardu arui ates augh awag axon baff bali bard ' +
  'bats beam beld bere bick bind birn blat blup boid bone bord bott bran brob buhr bure busy cage cand ' +
  'case caza ceti chef chub clag clip coca coke cond copr cote crab crop cult cuya daft dank dauw deem ' +
  'deny dhaw dike disc dodd dome dorm dove draw dubb duma dusk eats eely emit eral etym eyen faff faon ' +
  'feal fend fife firn flax floe fold form frat fuci fuse gaff gamy gasp gawm geld ghat girl gleg gnar ' +
  'goff gora gram gros guhr gurr gyri haft halo harn haze heii herl hilt hoar holy hopi hued hunt hymn ' +
  'idle ilot inro item jama jauk jerm jinn jolt jump kaid kapp keld keta kier kipe klip knop koil kran ' +
  'kyah lair lard lave lech lent lied lily liny llyn loge loon lost luce lunn lyra mail mamo marl maty ' +
  'mean meng mian mile mint mixy moke monk moro moxa mund muth nael nane nave nema ngai nock nope nuke ' +
  'ocht ohia olpe onza oral oval paar paip pant past peai peep perk phiz pied pina pise plat plug pole ' +
  'poof pose prau pruh pule pure qere quib racy raku rare read reel repp rier rink roam roke rope roup ' +
  'ruin ruth sadr sair sant saut scob seah seen sept shad shim shug sigh sine sith skep slab slim slue ' +
  'snap snow sody sond sorn sowt spig stap stir stug suit surd sway syrt tait tane tarr tawa teat tell ' +
  'text this tide ting tobe toil took torn tour trek true tuft tuny tutu tymp ulmo unio urea uval vamp ' +
  'veer vest vino void waer wali warf wauf wede wels wham whin wice wing wiss wone wort wugg wype yali ' +
  'aalii abode acerb addax adult agasp aguey akala alfet alloy alvus amide amylo annat apish arear ' +
  'arnee arval aspic atria auryl awest azide bahan bally bardy bason beaky bedip behap bemix besee ' +
  'biddy biota bland bloat bocoy boned boron bowla brawl brine bruin bulgy burry caber cagit canna ' +
  'carob caval ceria chark chess chlor chump civet cleat cloop cobia comfy copen coset coxal creat ' +
  'croci cruor cupay cycad daman dauby decke demos devil didym dital dogma doria draff drill dryad ' +
  'dunst eagle eeler elsin encup enzym erupt evict faced fangy fecal fetch filer flack flimp flump ' +
  'foldy fosie freed frowl funis gagor gaper gavel genom giber glair gloam goban goosy graip gride ' +
  'grove guess gunge hacky hange hauld hedgy herne hiper holla hosed humic hymen igloo impen inion ' +
  'ionic jacko jehup jixie jufti kafiz karst kenaf kiddy knack koine krina labia lamby lasty leant ' +
  'lemma libel limmu lithe lodge lorum lulab lymph maidy mangi maria matzo melam mesne mikie mirza ' +
  'moise moors moted mowse mulga musky nairy natal negro niche niter nonda nowel oakum odium olive ' +
  'orage oside ovant oxter palla papyr pasty peach pelta petre pichi pilus pisco plaza plush polos ' +
  'poros prate prize psych punti pyxie quell quota ramal ratel reasy recut reget renin resue rheic ' +
  'rigor roast rooky roupy ruggy rutty saker sanai satin scale schwa scrab scurf selly seron shady ' +
  'shawy shill shoop shunt silly sithe skelp skunk sleet slopy smeek snail snoek soddy sonar soury ' +
  'spark spick spoke spume staio steam stife stole strae study suety surma swelp sycee tahin tambo ' +
  'taraf taupo tecon tengu tewel these those tibey timid tlaco toosh toter traik trice troot tubae ' +
  'tupek tweed uayeb unact undid unhot unode unsty upend urdee usure vakia veery viand virga vomer ' +
  'waily warse weber whalp wheki whole wined wodgy wough wudge yakin yezzy abacay absmho acidly adduct ' +
  'aerobe agouta alares alkine always amoret androl anoint apheta arbute armory asemia assish atinga ' +
  'aumaga avowal babish bakery baniya barren batule becalm bedumb begoud beloid bepelt bester bhangi ' +
  'billet biurea blowup bolden border bowery breeze browse buller burker bygane caduca camlet canzon ' +
  'carman cassia caviya cerium chaped chesty chocho chymic clarty clites cobang cogger comart convex ' +
  'corker cotton crabby cressy crunch cuneal cushat dabber dancer dawtet deckie delawn derate dewlap ' +
  'diglot dirdum doater domine dotted drippy dudman durrin edemic elbowy empery engage enrive ephete ' +
  'espial evince exsert fallen faulty ferine filate fitful flewed foeish forfar foxish froggy fungus ' +
  'gaduin gamori gasman geneva giarre girsle gluten gollar gowpen gringo grumpy gunyeh hafter hamous ' +
  'hatpin heehaw hereon hinoki holing horror humbug hymnal imbark inbred infirm inrush inweed isopag ' +
  'jarbot jiggly jowari kaffir katmon ketose kinkle koilon kumrah ladder landed lathee leadin lendee ' +
  'lidder lining loaded longan lucent lyceal maholi maness marcor matapi meatal menace mether milter ' +
  'mistic moloid morkin moyite munshi mutist nadder nation nester nigori nonane nowhat oafdom octant ' +
  'oilery oocyst orenda otosis outsee oxonic palled pantun parlor patrin pecten pencil pertly phocal ' +
  'piddle pimplo pistil pleura poetry ponier poseur prancy prismy ptosis pungar putlog queasy racker ' +
  'rameal rarefy really recart redden reflux reiver remand repeal rescue resuck reurge rhumba rimmed ' +
  'robalo rosary ruckle rupiah saeter samadh sarkar saying scious scrimp season selfly serial shaker ' +
  'shelty shovel sifter sindoc skeely sleech slunge snarer sobeit soneri source spense spoony square ' +
  'starvy stilet strade strold subage sulpha surety swelly tabret tallis tanrec tartly taxing telang ' +
  'termon theism thrash tickey tinean tither tomboy torfel towser tricky trophy tufted turkle twicer ' +
  'umbral uncase undewy unfurl unholy unlent unpaid unsage unstow unweld updive upmove uptilt urnism ' +
  'vahine veiler versal vinery voider wafter wankle wauble weevil whilom wildly wistit wooled wungee ' +
  'yarrow yuzlik abacate academe acolyte addlins aeneous agitate alangin alipata alterer amidase ' +
  'analgia animist antired aplenty araneid armilla ashamnu astrict attired averted babassu balanid ' +
  'bardish bateman bearlet bedgoer begloze benefit beshade betrace biggish birdman bleeder boaster ' +
  'bonnily bottled brainer bridler brownly bughead burgall caaming calepin candent capstan caroche ' +
  'casuist caviler cestoid chapper chevage choline cimelia classes closely cocking coldish compare ' +
  'conical copaiba correal courser cranian crinkle crummie cuminic cutcher dacitic dastard decayed ' +
  'deglaze depeter develop diaulic diluvia discept distain doggrel doutous driddle dueness dwindle ' +
  'echoize eidetic embathe enclave enjoyer envapor episode erosion ethoxyl excitor eyebalm falcula ' +
  'fathead feoffor fifthly fireman flanque flooded focuser foreact fougade friable fumette gainset ' +
  'garland gelable gerusia gitoxin glowing goliard grailer grieced grumphy gumwood hacking handout ' +
  'hattery hebamic henotic hiation hogship hornify humerus hyoidan ignorer impling indican inkfish ' +
  'interim ischury jackass jeddock jollier kalasie ketting kiotome kokowai lacunar langite lavable ' +
  'legally leysing lingtow lobster lophiid lugworm madhuca malmsey mantoid masquer measure merfold ' +
  'midward minxish misstep moleism moorman mowburn mungofa myomere narcism neolith nictate nominee ' +
  'notedly nutting ochroid oilcoat onymize oralogy oscheal outcase outlash outshow overact overtly ' +
  'pabular palmula paprica paschal payroll pelisse percher petrary phytoid pigwash pinking pittite ' +
  'playday plumist poldavy popshop pottled precool preship prismed propyne psalter pulsive putrefy ' +
  'quashey quintet railing raspite reamend recheer redsear regrant remould rereign restrap reversi ' +
  'ribskin risquee roofage roughet rummage sagathy sandboy saucily scapple scollop scrotum seawife ' +
  'semence serific sexuale sheerly shooler sickbed simpler skatiku skysail slitted smither snobber ' +
  'solidly sottish spatial spinder spottle squiret starred steward storied student subdial subtack ' +
  'summate sustain syagush taccada tallish taperer tautaug temacha terrage themata thought tigress ' +
  'titanic tongman toshery tracing trendle triobol trotter tuftlet tussore tylotus unalarm unbrent ' +
  'uncrown unfiend unguent unitize unmiter unpoled unsheaf unstout unurned upcanal upsilon urceole ' +
  'vacuist vaselet vergent viduate vitraux waesuck wardman waybird wemless whilock widowed wishing ' +
  'worlded xerotes aardvark abutment acierage adendric aerarian aglimmer albicans allegate alveolus ' +
  'amplexus andirine anogenic antipart apogaeic araceous arillode asfetida astrally augurate aversant ' +
  'bacchius bakelite bankable barterer beanweed beetrave bemangle beshiver bhagavat bimotors bistoury ' +
  'blissful boattail bookland boviform breasted brotulid bullweed bywalker calciner canalman capybara ' +
  'carthame caulicle ceration chardock chichipe chopboat cineolic clayweed clubhand cockbill cokelike ' +
  'comelily congiary copaibic corporas couscous creamery cropshin cuissard cutpurse dactylus deadener ' +
  'dedendum delphine depencil devaloka dibstone dimetric disclike distancy dogmouth doubling drapping ' +
  'drumhead dwelling ecostate elastica emersion endamage enmuffle envisage epivalve escarole euchrome ' +
  'evilness exordial facially farsalah fellness ficklety finochio flagroot flincher flustery footwall ' +
  'foreplan forsooth freezing fruitery fuseplug ganggang geelhout germlike gladness glycosin gorgerin ' +
  'graypate grubhood guttable halfwise hardhack headline hellborn herbwife hightoby homaxial hormonic ' +
  'humanoid hypaxial igniform implumed indigene inimical intendit iodyrite isogonal jalousie jookerie ' +
  'kedgeree kilowatt kodakist laconize landskip laureate legation libation limonene lithosis logomach ' +
  'loyalism lymnaean mainport maniable marocain maverick melanite meruline micellar minatory mislodge ' +
  'modality monitory moosewob motorcab multigap mycology namazlik nebulium neuraxis nodulate nonrival ' +
  'noumenon oakberry octuplet ommateal ophionid oriconic otomyces outguard outspend overbody overhead ' +
  'overpray overturn ozophene palmiped panurgic parished patinate pedigree pentylic persuade phlorone ' +
  'picknick pinching pizzeria playsome plunging politize ponchoed portulan praefect preharsh prespoil ' +
  'pristane propense pruinous pullorum puruloid quagmire quintole railroad ratliner reattire recopper ' +
  'refilter reinjure remuster repurple restress reverend rickshaw riverish rooklike royalize rutylene ' +
  'salivate saponary scabious schnabel scrampum scyllite seecatch semicurl separate sexangle sheeplet ' +
  'shoptalk siderose sinapism skewings sledging sluicing sneerful sodalite songfest spaewife spherula ' +
  'spoliate spurling staghunt stavrite stifling straddle strophic subepoch substyle sullenly surgical ' +
  'swiveled synonymy taistrel tarafdar tearable tenesmus tetrapla thiasote throwing timaline tobaccoy ' +
  'topology toywoman tredille trigonal trochate tsaritza turnsole udometry unawaked unbrined uncoffer ' +
  'underdip unearned unfleshy ungraced unhooper unkinged unmasker unnormal unpriced unroiled unshewed ' +
  'unsteady untooled unwasted upsiloid ursiform vampiric velatura vervenia vinegary vividity wagonful ' +
  'warrener weaselly wheyness willable witchery abacinate accedence acrobatic adjustage aeroscopy ' +
  'agalactic alchitran allograph amaurotic amusement anatropal anisidine anthotaxy antitheft apotelesm ' +
  'arbuscule armorwise asininely ateliosis auroauric available backpedal ballywack barriguda beastbane ' +
  'beglitter beringite bicornate biostatic blackbutt bloodless boodleize brainache bridgeman brushbush ' +
  'burghemot cadastral campholic captainly carpincho catarrhal cellarage chafeweed checkbite chinching ' +
  'chrysalis citropten climatize coastland coeternal colonizer commuting conferval consulage coralbush ' +
  'corrupter coupstick creatural crossbelt cubmaster cutthroat czarinian deaminate decompose dejectory ' +
  'denitrate designing diabolify dicastery dilatator disclimax dispeople diversify dortiship driftless ' +
  'dusterman ecderonic elaborate embroiler endenizen enshelter epicormic equalling esoterics eupractic ' +
  'exciseman exoticist extraquiz falcopern febrifuge fibrilled fireshaft flayflint fluorenyl forebrain ' +
  'formamide freckened frustrate galactose gasometry geobotany gillstoup glossalgy goniatite grandness ' +
  'greenroom guberniya gyrometer handwrist hawsepipe hedgeless hemophage hewettite historier homopathy ' +
  'horselike hundredal hylopathy hypovalve imbreathe importray incretory infalling innocuous integrant ' +
  'interteam invocable isohyetal janitress jubilancy kermesite koniology lamellate latecomer legginged ' +
  'lienteric lippiness logicless lupinosis magnetite mandolute marmolite maudlinly melanitic mercenary ' +
  'metacoele microbial millering miscommit miswisdom monitress moonraker mousebird musaceous myosuture ' +
  'nastiness neoplasty nicknamee nonaccess nonmarket nonvirile nullifier obscenely odalisque omphacite ' +
  'opsimathy orthosite outbustle outtravel overeaten overplume overtness oxytonize palmerite papalizer ' +
  'parchable pastelist peachwood penetrate perfumery perpetual phalanxed phoronomy pickpurse piousness ' +
  'planisher plicative pohickory polymythy poricidal postulate preagonal predesert prekindle preresort ' +
  'priceable procident promptive prosodial psalmless pulvillar pygopagus quarrying quirewise rainbound ' +
  'reachless reckoning recursive reformist rejustify repatency rescratch retardent revulsive ridgingly ' +
  'rodingite routinely saccharum salvation satrapess scarpment scoldable scripulum seediness seminuria ' +
  'septogerm sexagonal shawlless shirttail sicklemia simulance skraeling slubberer snoutless soliloquy ' +
  'southward spendable spiritous spotteldy squirming statelily stevedore stonehand streetlet stylolite ' +
  'subjected subsecive sugarplum supercool susurrant syllabify synonymic tailoring taropatch tectrices ' +
  'tengerite tetramine theoremic threatful tiltmaker tongueman tottering trainsick tremolite trifolium ' +
  'tritheism tubatoxin twibilled umbonated unavenged unburthen uncontent undeluded underlier underwave ' +
  'unemerged unfestive ungarnish unhidable unispiral unluckily unobvious unpolitic unreposed unseaming ' +
  'unsmutted unstubbed untrammed unweighty urataemia uvulotomy vasospasm verdurous viciosity visuality ' +
  'vulpinite watchwork westernly whistlike winkelman abalienate absumption acetolytic actinomere ' +
  'admirative aeroscopic aggression algebraize alpestrine amniorrhea analphabet angelicize anorogenic ' +
  'antidotary antiscians apolaustic aquiparous arecolidin articulary associated attachable autoheader ' +
  'azocorinth balloonful basilicate beechdrops bergaptene biennially birdnester blastomere boltcutter ' +
  'brachydome brickmaker buccinator buttonbush calcitrant caniniform cardholder castigator cavernitis ' +
  'cerebritis chargeship chillingly choruslike cinnamoned cliftonite coalescent coexertion coloclysis ' +
  'compacture concinnous congregant contactual coperiodic corporeous counselful creakingly cruciality ' +
  'curmudgeon cystoidean deaquation decrescent delayingly denaturant deracinate despoticly diagraphic ' +
  'diffugient diploidion diseasedly disownment distracter dokimastic dragonnade duramatral ectethmoid ' +
  'elastician emergently endogenous ensilation epicardiac episporium erogeneity etiotropic exacerbate ' +
  'exorbitate extollment fanaticism feltmaking figuresome flashboard flunkyhood foredecree fortifying ' +
  'friskiness futileness gastronome geogonical glareproof glycuresis gracefully greenhouse guidecraft ' +
  'halberdier harrowment heiressdom hemocyanin hesitative highjacker homemaking hoplomachy hungriness ' +
  'hydroximic hypochnose ianthinite illiterate impartment inaccurate incumbence inevadible infusorium ' +
  'insatiable interaural interright inundation ironfisted isohalsine journalese keratotomy korntonder ' +
  'lampoonery laxatively leucocytal limnologic littleneck lubberlike macroseism malodorant marinheiro ' +
  'matronship melanoidin meristelic metagraphy miasmology millifarad misdateful mixoploidy monoclinic ' +
  'monstrator moundiness muscardine myoplastic natational neocyanine newscaster nomologist noneugenic ' +
  'nonprofane nonvesture nucleonics obsoletely oenanthate omophorion oratorical orthopedia otoplastic ' +
  'outvillage overfagged overnicety oversubtly pabulatory palinodist pantometer paramagnet parodiable ' +
  'patriciate pedocalcic pentathlon periclinal permission petroglyph philoneism photophore pictograph ' +
  'pipecoline plasmagene pleuralgia poignantly polyhedric ponticulus posthumous praisingly precognize ' +
  'prediction preinstill prepyloric pretorship probiology profoundly prophesier proteopexy pseudandry ' +
  'pulmonated pyosalpinx qualminess racemosely rattlebush receptible redecorate regelation relinquish ' +
  'reperceive resolutely retrograde rheotropic riotocracy routhiness saccomyian sanctified savageness ' +
  'scholarism screeching seborrheic semideific semisolute serpentary sheathbill shortening silkgrower ' +
  'sizzlingly sloshiness snooziness sombreroed speakhouse spillproof spongingly squareface starveling ' +
  'sternworks storiology stringency subareolet subglenoid subradular succourful summerless supersweet ' +
  'surreption symbolical synorchism talismanic tavernlike templelike tetraboric theologate thiotolene ' +
  'thyrogenic titratable torrentful trajectile tremorless trifurcate triquinoyl tropopause tunnellike ' +
  'tyromatous unaffirmed unbandaged unbothered unclimbing uncurbable undercreep underscale undeterred ' +
  'unelicited unexorable unflippant ungrasping unidentate uninvented unlegacied unmilitary unopulence ' +
  'unpleading unquivered unreserved unsceptred unsimplify unsteepled untellable untwitched unwheedled ' +
  'urohematin valvulitis venomously viceroydom visibilize wageworker weaponshaw whitewards';
